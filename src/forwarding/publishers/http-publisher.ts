import { Pool } from 'undici';
import type { ClaimedForward } from '../outbox/outbox.js';
import { retryAfterMs } from '../backoff.js';
import type { Destination } from '../destination.js';
import { headerValue, keptAnswer } from './destination-answer.js';
import { guardRefusal } from '../guard-refusal.js';
import { guardedConnector, GUARD_ERROR_CODE } from '../network-guard.js';
import type { Publisher, PublishResult } from './publisher.js';
import { StandardWebhooksSigner } from './sign.js';

/** Request headers that are never passed on: hop-by-hop ones (RFC 9110 7.6.1), the host, the length, and those Reception sets. */
const NOT_PASSED_ON = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'content-length',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-reception-source',
  'x-reception-attempt',
]);

export interface HttpPublisherOptions {
  /** Header names (lower case) whose values the inbox redacts: not passed on. */
  redactHeaders: ReadonlySet<string>;
  /** For tests: how names are resolved (the guard checks what this answers). */
  lookup?: Parameters<typeof guardedConnector>[0]['lookup'];
}

/**
 * POSTs forwards to an HTTP destination (CONTRACT 6) on an undici pool of
 * `concurrency` connections: the exact body bytes and Content-Type, the
 * original headers but hop-by-hop and redacted ones, then Reception's own.
 * Redirects are not followed (undici follows none unless asked).
 */
export class HttpPublisher implements Publisher {
  private readonly pool: Pool;
  private readonly url: URL;
  private readonly path: string;
  private readonly signer: StandardWebhooksSigner | undefined;
  private readonly extra: ReadonlyArray<[string, string]>;
  private readonly replaced: ReadonlySet<string>;

  constructor(
    private readonly destination: Destination,
    private readonly options: HttpPublisherOptions,
  ) {
    if (destination.url === undefined) throw new Error(`destination ${destination.name} has no url`);
    this.url = destination.url;
    this.path = `${this.url.pathname}${this.url.search}`;
    this.pool = new Pool(this.url.origin, {
      connections: destination.concurrency,
      connect: guardedConnector({
        allowPrivateNetwork: destination.allowPrivateNetwork,
        timeoutMs: destination.timeoutMs,
        ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      }),
      headersTimeout: destination.timeoutMs,
      bodyTimeout: destination.timeoutMs,
      keepAliveTimeout: 4000,
    });
    this.signer = destination.signSecret === undefined ? undefined : new StandardWebhooksSigner(destination.signSecret);
    this.extra = destination.headers;
    this.replaced = new Set(destination.headers.map(([name]) => name.toLowerCase()));
  }

  async publish(claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult> {
    const { forward, delivery } = claimed;
    // A transform's headers add to or replace the others (CONTRACT 10); its body is `delivery.raw` already.
    const shaped = claimed.transformHeaders ?? {};
    const headers: string[] = [];
    for (const [name, value] of delivery.headers) {
      const lower = name.toLowerCase();
      if (
        NOT_PASSED_ON.has(lower) ||
        this.options.redactHeaders.has(lower) ||
        this.replaced.has(lower) ||
        Object.hasOwn(shaped, lower)
      )
        continue;
      headers.push(name, value);
    }
    // A header carries bytes, not Unicode: the source name goes percent-encoded, as in the webhook URL (`日本` is `%E6%97%A5%E6%9C%AC`).
    headers.push(
      'webhook-id',
      delivery.id,
      'x-reception-source',
      encodeURIComponent(delivery.source),
      'x-reception-attempt',
      String(forward.attemptCount),
    );
    for (const [name, value] of this.extra) if (!Object.hasOwn(shaped, name.toLowerCase())) headers.push(name, value);
    for (const [name, value] of Object.entries(shaped)) headers.push(name, value);
    // Signs what is sent: the transformed body when there is one.
    if (this.signer !== undefined) {
      const signed = this.signer.sign(delivery.id, Math.floor(Date.now() / 1000), delivery.raw);
      headers.push('webhook-timestamp', signed['webhook-timestamp'], 'webhook-signature', signed['webhook-signature']);
    }
    const timeout = AbortSignal.timeout(this.destination.timeoutMs);
    try {
      const answer = await this.pool.request({
        origin: this.url.origin,
        path: this.path,
        method: 'POST',
        headers,
        body: delivery.raw,
        signal: AbortSignal.any([signal, timeout]),
        // Ordered [name, value] pairs as they came, for the answer kept with the attempt.
        responseHeaders: 'raw',
      });
      // Its headers and first 4 KiB, the rest dropped unread (CONTRACT 6); the attempt's timeout bounds a trickle.
      const response = await keptAnswer(answer.headers, answer.body);
      const status = answer.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status, error: null, response };
      const wait = retryAfterMs(headerValue(response.headers, 'retry-after'), Date.now());
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      return {
        ok: false,
        status,
        error: `HTTP ${status}${redirect}`,
        response,
        ...(wait === undefined ? {} : { retryAfterMs: wait }),
      };
    } catch (error) {
      // The guard's refusal can only end the same way every time: failed at once (CONTRACT 6).
      const refusal = guardRefusal(error);
      if (refusal !== undefined) return { ok: false, status: null, error: refusal.message, response: null, permanent: true };
      if (timeout.aborted)
        return { ok: false, status: null, error: `timeout: no answer within ${this.destination.timeoutMs} ms` };
      if (signal.aborted) return { ok: false, status: null, error: 'aborted: Reception is shutting down' };
      return { ok: false, status: null, error: describeFailure(error) };
    }
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

/** A failed request in one line: the guard's refusal as it is, else the system's code and message. */
function describeFailure(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === GUARD_ERROR_CODE) return current.message;
    if (typeof code === 'string' && code.startsWith('E') && !code.startsWith('ERR_')) return `${code}: ${current.message}`;
    current = current.cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 300);
}
