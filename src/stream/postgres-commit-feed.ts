import pg from 'pg';
import type { Logger } from '../observe/logger.js';
import { LocalCommitFeed, type PublishingFeed } from './commit-feed.js';

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

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly logger: Logger,
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
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, connectionTimeoutMillis: 5000 });
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
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client || this.stopped) return;
    this.client = undefined;
    this.logger.warn({ err: error.message, retryMs: this.retryMs }, 'commit feed lost its PostgreSQL connection; reconnecting');
    void client.end().catch(() => undefined);
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
