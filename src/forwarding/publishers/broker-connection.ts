import type { Logger } from '../../platform/observe/logger.js';
import { backoffMs } from '../backoff.js';
import { unlessAborted } from './unless-aborted.js';
import { guardRefusal } from '../guard-refusal.js';

/**
 * One broker destination's connection (CONTRACT 7): opened once when the
 * destination comes into force, opened again after it is lost, with full
 * jitter backoff (100 ms doubling up to 5 s) while the broker does not
 * answer, and closed when the destination stops. The broker clients' own
 * reconnection is turned off: this is the one place that reconnects, so
 * that every broker behaves the same, the private-network guard runs on
 * every new connection, and the state shown in `GET /api/destinations` is
 * this one's.
 */

export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'closed';

export interface ConnectionStatus {
  state: ConnectionState;
  /** Why the last connection failed or was lost (never a password); null when it never was. */
  lastError: string | null;
  /** When the state last changed (ms). */
  since: number;
}

/** An open connection: the client's handle, and a promise that settles when the connection is lost (with why). */
export interface OpenedConnection<T> {
  handle: T;
  lost: Promise<unknown>;
}

export interface BrokerConnectionOptions<T> {
  /** The destination's name, for the log. */
  name: string;
  open(): Promise<OpenedConnection<T>>;
  /** Closes a connection, after what was published on it settled. */
  close(handle: T): Promise<void>;
  /** An error in one line, without the URL's secrets. */
  describe(error: unknown): string;
  logger: Logger;
}

const RECONNECT_INITIAL_MS = 100;
const RECONNECT_MAX_MS = 5000;
/** How long closing may take (a broker that stopped answering never confirms a close): then the connection is left. */
const CLOSE_LIMIT_MS = 5000;

export class BrokerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

export class BrokerConnection<T> {
  private current: T | undefined;
  private opening: Promise<void> | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private closing = false;
  /** The private-network guard refused the last connection: attempts fail with that, not retried. */
  private refusal: Error | undefined;
  private state: ConnectionStatus = { state: 'connecting', lastError: null, since: Date.now() };

  constructor(private readonly options: BrokerConnectionOptions<T>) {
    this.connect();
  }

  status(): ConnectionStatus {
    return { ...this.state };
  }

  /**
   * The open connection. While one is being opened, waits for it (at most
   * `timeoutMs`); while the broker is down, fails at once with why, so that
   * the attempt fails and is retried like any other.
   */
  async ready(timeoutMs: number, signal: AbortSignal): Promise<T> {
    if (this.current !== undefined) return this.current;
    const opening = this.opening;
    if (opening !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await unlessAborted(Promise.race([opening, timeout]), signal);
      clearTimeout(timer);
      if (this.current !== undefined) return this.current;
    }
    if (this.closing) throw new BrokerUnavailableError('not connected: Reception is shutting down');
    if (this.refusal !== undefined) throw this.refusal;
    const why = this.state.lastError ?? `no connection within ${timeoutMs} ms`;
    throw new BrokerUnavailableError(`not connected to the broker (${why}); reconnecting`);
  }

  /** A connection that a publish found dead (an AMQP channel closed under it): closed, then opened again. */
  lose(handle: T, why: unknown): void {
    this.lost(handle, why);
  }

  /** Stops reconnecting and closes the connection (the caller let what was in flight settle first). */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.timer);
    await this.opening;
    const handle = this.current;
    this.current = undefined;
    if (handle !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_LIMIT_MS)));
      await Promise.race([this.options.close(handle).catch(() => undefined), limit]);
      clearTimeout(timer);
    }
    this.set('closed');
  }

  private connect(): void {
    if (this.closing) return;
    this.set('connecting');
    this.opening = this.options
      .open()
      .then(
        ({ handle, lost }) => {
          if (this.closing) {
            void this.options.close(handle).catch(() => undefined);
            return;
          }
          this.current = handle;
          this.failures = 0;
          this.refusal = undefined;
          this.set('connected');
          this.options.logger.info({ destination: this.options.name }, 'broker connected');
          void lost.then(
            (why) => this.lost(handle, why),
            (why: unknown) => this.lost(handle, why),
          );
        },
        (error: unknown) => {
          this.failures++;
          this.refusal = guardRefusal(error);
          const message = this.options.describe(error);
          // Said once per change, not at every try while the broker stays down.
          if (message !== this.state.lastError || this.failures === 1) {
            this.options.logger.warn({ destination: this.options.name, error: message }, 'broker connection failed; retrying');
          }
          this.state.lastError = message;
          this.set('disconnected');
          this.schedule();
        },
      )
      .finally(() => {
        this.opening = undefined;
      });
  }

  private lost(handle: T, why: unknown): void {
    if (this.current !== handle) return;
    this.current = undefined;
    void this.options.close(handle).catch(() => undefined);
    if (this.closing) return;
    const message = why === undefined || why === null ? 'the broker closed the connection' : this.options.describe(why);
    this.state.lastError = message;
    this.set('disconnected');
    this.options.logger.warn({ destination: this.options.name, error: message }, 'broker connection lost; reconnecting');
    this.failures = 1;
    this.schedule();
  }

  private schedule(): void {
    if (this.closing) return;
    const wait = Math.max(10, backoffMs(this.failures, RECONNECT_INITIAL_MS, RECONNECT_MAX_MS));
    this.timer = setTimeout(() => this.connect(), wait);
    this.timer.unref();
  }

  private set(state: ConnectionState): void {
    if (this.state.state !== state) this.state = { ...this.state, state, since: Date.now() };
  }
}
