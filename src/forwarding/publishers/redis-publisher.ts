import type * as Redis from 'redis';
import type { NameTemplate } from '../name-template.js';
import type { ClaimedForward } from '../outbox/outbox.js';
import { bareHost, brokerLookup, checkLiteralHost } from './broker-address.js';
import type { OpenedConnection } from './broker-connection.js';
import { renderName } from './broker-names.js';
import {
  ABORTED,
  attemptTimer,
  BrokerPublisher,
  describeBrokerError,
  failed,
  PUBLISHED,
  type BrokerPublisherOptions,
} from './broker-publisher.js';
import { unlessAborted } from './unless-aborted.js';
import type { Destination } from '../destination.js';
import type { PublishResult } from './publisher.js';

/** A client of this destination: node-redis with its own reconnection off. */
function newClient(
  createClient: typeof Redis.createClient,
  url: URL,
  timeoutMs: number,
  lookup: ReturnType<typeof brokerLookup>,
) {
  return createClient({
    url: url.href,
    disableOfflineQueue: true,
    // This destination's BrokerConnection reconnects (through the guard), not the client.
    socket: { connectTimeout: timeoutMs, reconnectStrategy: false, ...(lookup === undefined ? {} : { lookup }) },
  });
}
type RedisClient = ReturnType<typeof newClient>;

/**
 * Appends forwards to a Redis stream (CONTRACT 7) with `XADD`, trimmed with
 * `MAXLEN ~ maxLen` when the destination sets one; success is the entry id
 * that Redis answers. Fields: `id` (the delivery id), `source`, `eventType`
 * (empty when none), `receivedAt`, `contentType`, `headers` (the original
 * headers as JSON `[[name, value], ...]`, without the redacted ones) and
 * `body` (the raw bytes).
 *
 * On the `redis` package (node-redis, kept by Redis itself): its socket
 * options go to `net.connect` as they are, so the private-network guard's
 * lookup plugs in; with `disableOfflineQueue` a command sent while the
 * server is away fails at once rather than waiting in memory.
 */
export class RedisPublisher extends BrokerPublisher<RedisClient> {
  private readonly stream: NameTemplate;
  private readonly maxLen: number | undefined;

  constructor(destination: Destination, options: BrokerPublisherOptions) {
    const { settings, template } = BrokerPublisher.brokerSettings(destination, 'redis', (redis) => redis.stream);
    // close() answers what was sent before it, then closes.
    super(destination, options, settings.url, (client) => client.close());
    this.maxLen = settings.maxLen;
    this.stream = template;
  }

  protected async send(client: RedisClient, claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult> {
    const { delivery } = claimed;
    const { timeoutMs } = this.destination;
    const eventType = delivery.eventType ?? null;
    const key = renderName(this.stream, 'redis', { source: delivery.source, eventType });
    // A transform's headers add to or replace the original ones (CONTRACT 10); its body is `delivery.raw` already.
    const shaped = claimed.transformHeaders ?? {};
    const headers: Array<[string, string]> = [
      ...delivery.headers.filter(
        ([name]) => !this.options.redactHeaders.has(name.toLowerCase()) && !Object.hasOwn(shaped, name.toLowerCase()),
      ),
      ...Object.entries(shaped),
    ];
    const timer = attemptTimer(timeoutMs);
    try {
      const answer = await unlessAborted(
        Promise.race([
          client.xAdd(
            key,
            '*',
            {
              id: delivery.id,
              source: delivery.source,
              eventType: eventType ?? '',
              receivedAt: new Date(delivery.receivedAt).toISOString(),
              contentType: delivery.contentType,
              headers: JSON.stringify(headers),
              body: delivery.raw,
            },
            this.maxLen === undefined
              ? undefined
              : { TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: this.maxLen } },
          ),
          timer.expired,
        ]),
        signal,
      );
      if (answer === 'aborted') return failed(ABORTED);
      if (answer === 'timeout') return failed(`timeout: no XADD reply within ${timeoutMs} ms`);
      return PUBLISHED;
    } catch (error) {
      return failed(describeBrokerError(error, this.url));
    } finally {
      timer.clear();
    }
  }

  protected async open(): Promise<OpenedConnection<RedisClient>> {
    const { allowPrivateNetwork, timeoutMs } = this.destination;
    checkLiteralHost(bareHost(this.url), allowPrivateNetwork);
    const lookup = brokerLookup(allowPrivateNetwork);
    // Loaded with the first connection: a server without Redis destinations never loads it.
    const { createClient } = await import('redis');
    const client = newClient(createClient, this.url, timeoutMs, lookup);
    let lastError: unknown;
    // Without a listener, an 'error' event would end the process; 'terminated' (the client
    // does not reconnect) or 'end' (closed) follows and says the connection is gone.
    client.on('error', (error: unknown) => (lastError = error));
    const lost = new Promise<unknown>((resolve) => {
      client.once('terminated', (cause: unknown) => resolve(cause ?? lastError));
      client.once('end', () => resolve(lastError));
    });
    try {
      await client.connect();
    } catch (error) {
      client.destroy();
      throw error;
    }
    return { handle: client, lost };
  }
}
