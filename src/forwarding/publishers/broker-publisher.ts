import type { Logger } from '../../platform/observe/logger.js';
import type { ClaimedForward } from '../outbox/outbox.js';
import type { BrokerTarget, Destination } from '../destination.js';
import { parseNameTemplate, type NameTemplate } from '../name-template.js';
import type { BrokerKind } from './broker-names.js';
import { BrokerConnection, type ConnectionStatus, type OpenedConnection } from './broker-connection.js';
import type { Publisher, PublishResult } from './publisher.js';
import { guardRefusal } from '../guard-refusal.js';
import { GUARD_ERROR_CODE } from '../network-guard.js';
import { withoutUrlSecrets } from '../url-secrets.js';

/** What every broker publisher is given besides its destination. */
export interface BrokerPublisherOptions {
  logger: Logger;
  /** Header names (lower case) whose values the inbox redacts: not passed on (Redis's `headers` field). */
  redactHeaders: ReadonlySet<string>;
}

/** A broker's part of the config (`nats`, `amqp` or `redis`). */
export type BrokerSettings<K extends BrokerKind> = Extract<BrokerTarget, { kind: K }> extends Record<K, infer S> ? S : never;

const BROKER_LABEL: Record<BrokerKind, string> = { nats: 'a NATS', amqp: 'an AMQP', redis: 'a Redis' };

/**
 * What the three broker publishers (NATS, AMQP, Redis) share: the
 * destination's one connection (`BrokerConnection`: opened when first
 * needed, opened again after it is lost, closed with the destination), and
 * the shape of an attempt: wait up to the destination's `timeoutMs` for the
 * connection, fail with why when there is none, else hand the forward to
 * `send`. A publisher says how to open and close its client's connection
 * and how to send one forward on it.
 */
export abstract class BrokerPublisher<H> implements Publisher {
  protected readonly url: URL;
  private readonly link: BrokerConnection<H>;

  constructor(
    protected readonly destination: Destination,
    protected readonly options: BrokerPublisherOptions,
    url: string,
    /** Closes a connection, after what was published on it settled. */
    closeHandle: (handle: H) => Promise<void>,
  ) {
    this.url = new URL(url);
    this.link = new BrokerConnection({
      name: destination.name,
      open: () => this.open(),
      close: closeHandle,
      describe: (error) => describeBrokerError(error, this.url),
      logger: options.logger,
    });
  }

  /**
   * The destination's settings for this broker, and the name template (the
   * subject, routing key or stream) that `templateOf` picks from them,
   * parsed. Throws when the destination is of another kind or the template
   * is not one: the config's check refuses both before a publisher is made.
   * Static, so that a constructor calls it before `super` (which needs the URL).
   */
  protected static brokerSettings<K extends BrokerKind>(
    destination: Destination,
    kind: K,
    templateOf: (settings: BrokerSettings<K>) => string,
  ): { settings: BrokerSettings<K>; template: NameTemplate } {
    const target = destination.broker;
    if (target?.kind !== kind) throw new Error(`destination ${destination.name} is not ${BROKER_LABEL[kind]} one`);
    const settings = (target as unknown as Record<K, BrokerSettings<K>>)[kind];
    const parsed = parseNameTemplate(templateOf(settings));
    if ('problem' in parsed) throw new Error(`destination ${destination.name}: ${parsed.problem}`);
    return { settings, template: parsed.template };
  }

  connection(): ConnectionStatus {
    return this.link.status();
  }

  async publish(claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult> {
    let handle: H;
    try {
      handle = await this.link.ready(this.destination.timeoutMs, signal);
    } catch (error) {
      return notConnected(error, this.url);
    }
    return this.send(handle, claimed, signal);
  }

  async close(): Promise<void> {
    await this.link.close();
  }

  /** Opens a connection with the client's own reconnection off, through the private-network guard. */
  protected abstract open(): Promise<OpenedConnection<H>>;

  /** Sends one forward on an open connection: succeeded once the broker took it (its ack, confirm or entry id). */
  protected abstract send(handle: H, claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult>;
}

/** An attempt the broker took. */
export const PUBLISHED: PublishResult = { ok: true, status: null, error: null };

/** A timer for one attempt that no answer came to: `expired` resolves after `ms`; `clear` it when the answer came first. */
export function attemptTimer(ms: number): { expired: Promise<'timeout'>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  return { expired, clear: () => clearTimeout(timer) };
}

export function failed(error: string): PublishResult {
  return { ok: false, status: null, error };
}

/** An attempt that found no connection: failed, and not retried when the guard refused it (CONTRACT 6). */
export function notConnected(error: unknown, url: URL): PublishResult {
  return { ...failed(describeBrokerError(error, url)), ...(guardRefusal(error) === undefined ? {} : { permanent: true }) };
}

/**
 * A broker client's error in one line: the guard's refusal as it is, else
 * the message with the system's code (ECONNREFUSED...) when it has one, cut
 * at 300 characters, and never the URL's credentials.
 */
export function describeBrokerError(error: unknown, url: URL): string {
  let current: unknown = error;
  let text: string | undefined;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === GUARD_ERROR_CODE) {
      text = current.message;
      break;
    }
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      text = current.message.includes(code) ? current.message : `${code}: ${current.message}`;
      break;
    }
    current = current.cause;
  }
  text ??= error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex -- a log line and the API show one line
  return withoutUrlSecrets(text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim(), url).slice(0, 300) || 'unknown error';
}

/** Why an attempt cut short by shutdown failed. */
export const ABORTED = 'aborted: Reception is shutting down';
