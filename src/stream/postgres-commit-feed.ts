import pg from 'pg';
import type { Logger } from '../platform/observe/logger.js';
import { LocalCommitFeed, type PublishingFeed } from '../deliveries/commit-feed.js';

/**
 * Wakes this instance's readers when any instance commits: LISTEN on the
 * channel that every append NOTIFYs in its transaction. The notification
 * carries nothing; readers read the table after their own position. When the
 * connection drops it reconnects with backoff and wakes every reader once,
 * so nothing committed meanwhile waits for the next notification.
 */
export class PostgresCommitFeed implements PublishingFeed {
  private readonly local = new LocalCommitFeed();
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = 250;
  private retryTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;

  /**
   * `checkEveryMs`: how often the LISTEN connection is asked a `SELECT 1`.
   * A connection that PostgreSQL (or the network between) stopped answering
   * without closing it would otherwise never be noticed, and this instance's
   * readers would see other instances' deliveries only after its own next
   * commit. One that does not answer within `checkEveryMs` is replaced.
   */
  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly logger: Logger,
    private readonly checkEveryMs = 15_000,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  subscribe(listener: () => void): () => void {
    return this.local.subscribe(listener);
  }

  get subscriberCount(): number {
    return this.local.subscriberCount;
  }

  publish(): void {
    this.local.publish();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.checkTimer !== undefined) clearInterval(this.checkTimer);
    const client = this.client;
    if (client === undefined) return;
    // A connection that stopped answering would never confirm its end.
    const ended = client.end().then(
      () => true,
      () => true,
    );
    const waited = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref());
    if (!(await Promise.race([ended, waited]))) destroyConnection(client);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      query_timeout: this.checkEveryMs,
    });
    client.on('notification', () => this.local.publish());
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (error) {
      // Connected but could not LISTEN (the server still starting up): close it, or it stays open unused.
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.retryMs = 250;
    if (this.checkTimer !== undefined) clearInterval(this.checkTimer);
    this.checkTimer = setInterval(() => this.check(client), this.checkEveryMs);
    this.checkTimer.unref();
  }

  /** Asks the LISTEN connection a question it must answer within `checkEveryMs`. */
  private check(client: pg.Client): void {
    if (this.client !== client) return;
    client.query('SELECT 1').catch((error: unknown) => {
      this.lost(client, error instanceof Error ? error : new Error(String(error)));
    });
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client || this.stopped) return;
    this.client = undefined;
    if (this.checkTimer !== undefined) clearInterval(this.checkTimer);
    this.logger.warn({ err: error.message, retryMs: this.retryMs }, 'commit feed lost its PostgreSQL connection; reconnecting');
    destroyConnection(client);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.connect()
        .then(() => {
          this.logger.info('commit feed reconnected to PostgreSQL');
          this.local.publish();
        })
        .catch(() => {
          this.retryMs = Math.min(this.retryMs * 2, 5000);
          this.scheduleReconnect();
        });
    }, this.retryMs);
    this.retryTimer.unref();
  }
}

/** Closes a client's socket at once, without the goodbye that a connection that stopped answering would never confirm. */
function destroyConnection(client: pg.Client): void {
  (client as pg.Client & { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
