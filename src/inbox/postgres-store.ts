import type { InboxDatabase } from './inbox-database.js';
import pg from 'pg';
import {
  type AppendOutcome,
  type DeletedBatch,
  type DeriveEventType,
  type EventTypeQuery,
  type EventTypeSummary,
  type IndexBudget,
  type IndexProgress,
  type ListQuery,
  type NewDelivery,
  type SourceQuery,
  type SourceSummary,
  type StoredDelivery,
} from '../deliveries/delivery-store.js';
import { BatchRefusedError, StoreUnavailableError } from '../platform/db/store-errors.js';
import { DELIVERY_COLUMNS, deliveryFromRow, describeStoreError, type DeliveryRow } from '../deliveries/delivery-row.js';
import type { DeliveryFilter } from '../deliveries/delivery-filter.js';
import { migrate } from '../platform/db/postgres/migrate.js';
import { filled, indexStep } from '../search/postgres-search.js';
import { countMatching, deleteMatching, listPage } from './postgres-list.js';
import { PostgresOutbox } from '../forwarding/outbox/postgres-outbox.js';
import { PostgresRefusals } from '../refusals/postgres-refusals.js';
import { PostgresTraffic } from '../traffic/postgres-traffic.js';
import { PostgresIssues } from '../issues/postgres-issues.js';
import { holdable } from '../platform/db/postgres/text-values.js';
import { escapeKey } from '../deliveries/dedup-key.js';
import { APPEND, appendValues, FIRST_BY_KEY } from './postgres-append.js';

export interface PostgresStoreOptions {
  connectionString: string;
  /** The schema that holds Reception's tables (created when missing). */
  schema?: string;
  /** Connections in the pool. */
  poolSize?: number;
  /** Time to wait for a connection or a lock before answering 503, in ms. */
  timeoutMs?: number;
}

/** A query's outcome, never rejected: queries sent together are then awaited one after another without an unhandled rejection. */
type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

function settled<T>(query: Promise<T>): Promise<Settled<T>> {
  return query.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function valueOf<T>(result: Settled<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}

export class PostgresStore implements InboxDatabase {
  readonly kind = 'postgres';
  readonly pool: pg.Pool;
  readonly schema: string;
  /** The NOTIFY channel that tells other instances about commits. */
  readonly channel: string;
  readonly outbox: PostgresOutbox;
  readonly refusals: PostgresRefusals;
  readonly traffic: PostgresTraffic;
  readonly issues: PostgresIssues;

  private readonly runner;

  private constructor(options: PostgresStoreOptions) {
    this.schema = options.schema ?? 'public';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.schema)) throw new Error(`invalid schema name "${this.schema}"`);
    this.channel = `reception_${this.schema}`;
    const timeout = options.timeoutMs ?? 2000;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: timeout,
      idleTimeoutMillis: 30_000,
      options: `-c search_path=${this.schema} -c lock_timeout=${timeout} -c statement_timeout=${timeout * 5}`,
      // The server's statement_timeout cannot fire for a query it never
      // received: when PostgreSQL stops answering without closing the
      // connection (a network blackhole, a firewall's idle cut), a commit
      // would wait forever, and every delivery behind it. The client gives
      // up a second after the server would have: 503, the sender retries.
      query_timeout: timeout * 5 + 1000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // An idle connection that dies (PostgreSQL restarted) must not crash the process;
    // the pool opens a new one for the next query.
    this.pool.on('error', () => undefined);
    this.runner = {
      execute: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => this.execute<R>(text, values),
      transaction: <T>(work: (client: pg.PoolClient) => Promise<T>) => this.transaction(work),
    };
    this.outbox = new PostgresOutbox(this.runner);
    this.refusals = new PostgresRefusals(this.runner);
    this.traffic = new PostgresTraffic(this.runner);
    this.issues = new PostgresIssues(this.runner);
  }

  /**
   * Connects, creates the schema if needed and applies the migrations. A
   * failure says which server it tried (without the password) and what to
   * check: Reception does not wait for PostgreSQL at start.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    let client: pg.PoolClient;
    try {
      client = await store.pool.connect();
    } catch (error) {
      await store.pool.end().catch(() => undefined);
      throw new Error(
        `PostgreSQL at ${describeServer(options.connectionString)} cannot be reached (${describeStoreError(error)}). ` +
          'Check that it is running and that RECEPTION_DATABASE_URL names it; Reception does not wait for it at start.',
        { cause: error },
      );
    }
    client.on('error', ignoreConnectionError);
    try {
      await migrate(client, store.schema);
    } catch (error) {
      client.release(true);
      await store.pool.end().catch(() => undefined);
      throw new Error(
        `PostgreSQL at ${describeServer(options.connectionString)}: the tables in schema "${store.schema}" could not be created or updated (${describeStoreError(error)}). ` +
          'The user in RECEPTION_DATABASE_URL needs the right to create the schema and its tables (or use a schema it owns: RECEPTION_DATABASE_SCHEMA).',
        { cause: error },
      );
    } finally {
      client.off('error', ignoreConnectionError);
    }
    client.release();
    return store;
  }

  /**
   * APPEND alone (autocommit) for a batch without dedup keys: one round
   * trip, and the lock held only while PostgreSQL runs and commits it. A
   * batch with dedup keys needs to know, for a delivery not inserted (a
   * duplicate), its first delivery, read in the same transaction: BEGIN,
   * APPEND, FIRST_BY_KEY and COMMIT are then sent at once (node-postgres
   * sends each as soon as the one before is answered, with no turn of the
   * event loop between), so that the lock is held for network round trips
   * only. A query after a failed one fails in the aborted transaction (its
   * COMMIT rolls it back).
   */
  async append(batch: readonly NewDelivery[]): Promise<AppendOutcome[]> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      client.on('error', ignoreConnectionError);
      const keyed = batch.filter((d) => d.dedupKey !== null);
      const begun = keyed.length === 0 ? undefined : settled(client.query('BEGIN'));
      const inserted = settled(
        client.query<{ id: string; seq: string | null; leased_id: string | null; leased_position: string | null }>(
          APPEND,
          appendValues(batch, this.channel),
        ),
      );
      const firsts =
        begun === undefined
          ? undefined
          : settled(
              client.query<{ source: string; dedup_key: string; id: string; seq: string; received_at: string }>(FIRST_BY_KEY, [
                keyed.map((d) => d.source),
                keyed.map((d) => escapeKey(d.dedupKey ?? '')),
              ]),
            );
      const committed = begun === undefined ? undefined : settled(client.query('COMMIT'));
      // Every query answered before any is looked at: the connection goes back to the pool idle.
      const [begin, append, first, commit] = await Promise.all([begun, inserted, firsts, committed]);
      if (begin !== undefined) valueOf(begin);
      const seqById = new Map<string, number>();
      const leasedOf = new Map<string, Array<{ id: string; position: number }>>();
      for (const row of valueOf(append).rows) {
        if (row.seq !== null) seqById.set(row.id, Number(row.seq));
        else if (row.leased_id !== null) {
          const list = leasedOf.get(row.id) ?? [];
          list.push({ id: row.leased_id, position: Number(row.leased_position) });
          leasedOf.set(row.id, list);
        }
      }
      const byKey = new Map(
        (first === undefined ? [] : valueOf(first).rows).map((row) => [JSON.stringify([row.source, row.dedup_key]), row]),
      );
      if (commit !== undefined) {
        const ended = valueOf(commit);
        // COMMIT of a transaction that failed answers ROLLBACK, not an error: the error came before.
        if (ended.command !== 'COMMIT') throw new StoreUnavailableError(`PostgreSQL ended the batch with ${ended.command}`);
      }
      const outcomes = batch.map((d): AppendOutcome => {
        const seq = seqById.get(d.id);
        const leased = leasedOf.get(d.id);
        if (seq !== undefined)
          return { id: d.id, seq, receivedAt: d.receivedAt, duplicate: false, ...(leased === undefined ? {} : { leased }) };
        const first = byKey.get(JSON.stringify([d.source, escapeKey(d.dedupKey ?? '')]));
        if (first === undefined) throw new Error('insert skipped without a matching dedup key');
        return { id: first.id, seq: Number(first.seq), receivedAt: Number(first.received_at), duplicate: true };
      });
      client.off('error', ignoreConnectionError);
      client.release();
      return outcomes;
    } catch (error) {
      const refused = refusesTheBatch(error);
      if (client !== undefined) {
        // A failed transaction is ended by the COMMIT sent with it, and a failed APPEND alone
        // left none open. A connection that refused a value is sound (kept for the retries of
        // the batch's halves); any other failure may have left it unanswering: it is closed.
        client.off('error', ignoreConnectionError);
        client.release(!refused);
      }
      if (refused) throw new BatchRefusedError(`PostgreSQL refused the batch: ${describeStoreError(error)}`, { cause: error });
      throw new StoreUnavailableError(`PostgreSQL could not commit: ${describeStoreError(error)}`, { cause: error });
    }
  }

  /** Whether the time buckets cover every delivery: once true, it stays so. */
  private filledAlready = false;

  private async bucketsCover(): Promise<boolean> {
    this.filledAlready ||= await filled(this.runner);
    return this.filledAlready;
  }

  async list(query: ListQuery): Promise<StoredDelivery[]> {
    const buckets = query.since !== undefined || query.until !== undefined ? await this.bucketsCover() : false;
    const before = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows = await listPage(this.runner, query, before, query.limit, query.maxBytes, buckets);
    return this.withForwards(rows.map(deliveryFromRow));
  }

  /** The deliveries with their forwards' summaries, read in one query. */
  private async withForwards(deliveries: StoredDelivery[]): Promise<StoredDelivery[]> {
    const summaries = await this.outbox.summariesOf(deliveries.map((d) => d.seq));
    for (const delivery of deliveries) {
      const forwards = summaries.get(delivery.seq);
      if (forwards !== undefined) delivery.forwards = forwards;
    }
    return deliveries;
  }

  async readAfter(afterSeq: number, limit: number, source?: string): Promise<StoredDelivery[]> {
    if (source !== undefined && !holdable(source)) return [];
    const result =
      source === undefined
        ? await this.execute<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq > $1 ORDER BY seq ASC LIMIT $2`, [
            afterSeq,
            limit,
          ])
        : await this.execute<DeliveryRow>(
            `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE source = $1 AND seq > $2 ORDER BY seq ASC LIMIT $3`,
            [source, afterSeq, limit],
          );
    return this.withForwards(result.rows.map(deliveryFromRow));
  }

  async get(id: string): Promise<StoredDelivery | undefined> {
    if (!holdable(id)) return undefined;
    const result = await this.execute<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = $1`, [id]);
    const row = result.rows[0];
    return row === undefined ? undefined : (await this.withForwards([deliveryFromRow(row)]))[0];
  }

  async latestSeq(): Promise<number> {
    const result = await this.execute<{ last_seq: string }>('SELECT last_seq FROM inbox_position');
    return Number(result.rows[0]?.last_seq ?? 0);
  }

  async delete(id: string): Promise<boolean> {
    if (!holdable(id)) return false;
    return ((await this.execute('DELETE FROM deliveries WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  async sources(query: SourceQuery = {}): Promise<SourceSummary[]> {
    // COLLATE "C": code point order, as SQLite's, whatever the database's locale;
    // the index sources_by_name (migration 3) answers it. LIMIT NULL: no limit.
    // lower() folds by the database's LC_CTYPE (every script in a UTF-8 locale).
    const values: unknown[] = [query.after ?? '', query.limit ?? null];
    let search = '';
    if (query.search !== undefined) {
      values.push(query.search);
      search = ' AND strpos(lower(source), lower($3)) > 0';
    }
    const result = await this.execute<{ source: string; count: string; last_received_at: string }>(
      `SELECT source, count, last_received_at FROM sources
        WHERE source COLLATE "C" > $1${search} ORDER BY source COLLATE "C" LIMIT $2`,
      values,
    );
    return result.rows.map((row) => ({
      source: row.source,
      count: Number(row.count),
      lastReceivedAt: Number(row.last_received_at),
    }));
  }

  async eventTypes(query: EventTypeQuery): Promise<EventTypeSummary[]> {
    if (query.source !== undefined && !holdable(query.source)) return [];
    const result =
      query.source === undefined
        ? await this.execute<{ source: string; event_type: string; count: string; last_received_at: string }>(
            `SELECT source, event_type, count, last_received_at FROM event_types
              ORDER BY count DESC, source COLLATE "C", event_type COLLATE "C" LIMIT $1`,
            [query.limit],
          )
        : await this.execute<{ source: string; event_type: string; count: string; last_received_at: string }>(
            `SELECT source, event_type, count, last_received_at FROM event_types WHERE source = $1
              ORDER BY count DESC, event_type COLLATE "C" LIMIT $2`,
            [query.source, query.limit],
          );
    return result.rows.map((row) => ({
      source: row.source,
      eventType: row.event_type === '' ? null : row.event_type,
      count: Number(row.count),
      lastReceivedAt: Number(row.last_received_at),
    }));
  }

  async countMatching(filter: DeliveryFilter, limit: number): Promise<number> {
    return countMatching(this.runner, filter, limit);
  }

  async deleteMatching(filter: DeliveryFilter, beforeSeq: number, limit: number): Promise<DeletedBatch> {
    return deleteMatching(this.runner, filter, beforeSeq, limit);
  }

  async indexStep(budget: IndexBudget, derive: DeriveEventType): Promise<IndexProgress> {
    return indexStep(this.runner, budget, derive);
  }

  async pruneOlderThan(before: number, limit: number): Promise<number> {
    const result = await this.execute(
      `DELETE FROM deliveries WHERE seq IN (
        SELECT seq FROM deliveries d WHERE received_at < $1 AND NOT EXISTS (
          SELECT 1 FROM forwards f WHERE f.delivery_seq = d.seq AND f.status IN ('pending', 'delivering', 'failed'))
        ORDER BY received_at LIMIT $2)`,
      [before, limit],
    );
    return result.rowCount ?? 0;
  }

  /** One statement on a pooled connection; a lost or refused connection becomes StoreUnavailableError (503). */
  private async execute<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      if (isUnavailable(error))
        throw new StoreUnavailableError(`PostgreSQL could not answer: ${describeStoreError(error)}`, { cause: error });
      throw error;
    }
  }

  /** Several statements in one transaction on one connection; a lost connection becomes StoreUnavailableError (503). */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new StoreUnavailableError(`PostgreSQL could not answer: ${describeStoreError(error)}`, { cause: error });
    }
    client.on('error', ignoreConnectionError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.off('error', ignoreConnectionError);
      client.release();
      return result;
    } catch (error) {
      if (!isReadTimeout(error)) await client.query('ROLLBACK').catch(() => undefined);
      client.off('error', ignoreConnectionError);
      client.release(true);
      if (isUnavailable(error))
        throw new StoreUnavailableError(`PostgreSQL could not answer: ${describeStoreError(error)}`, { cause: error });
      throw error;
    }
  }

  /**
   * Ready when a write to the probe row commits: a read-only replica, a
   * read-only default or a database that cannot write refuses it. How much
   * room the database server has left is for its own monitoring; the health
   * route asks at most once a second (src/inbox/readiness.ts).
   */
  async checkWritable(): Promise<void> {
    try {
      const result = await this.pool.query('UPDATE reception_probe SET checked_at = $1', [Date.now()]);
      if (result.rowCount !== 1) throw new Error('the probe row is missing from reception_probe');
    } catch (error) {
      throw new StoreUnavailableError(`PostgreSQL is not writable: ${describeStoreError(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * The pool listens for errors on idle connections only. A connection that
 * dies while checked out (PostgreSQL restarting in the middle of a
 * transaction) also emits 'error', which would crash the process unheard:
 * the failing query already rejects, so the event itself is ignored.
 */
function ignoreConnectionError(): void {
  // the query in progress reports it
}

/**
 * True when PostgreSQL refused what the batch holds rather than the work:
 * a data exception (class 22: a value the type cannot hold), an integrity
 * constraint (23: an id already stored) or a program limit (54: a dedup key
 * too long for its index). Another batch, or this one without the guilty
 * delivery, may commit.
 */
function refusesTheBatch(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}

/** node-postgres's own `query_timeout`: the server did not answer in time, and may never. */
function isReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/**
 * True when the error says the database cannot be reached or is not taking
 * work right now (restarting, too many connections, a timeout), as opposed
 * to a fault in the statement itself.
 */
function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  // No SQLSTATE: the socket failed (ECONNREFUSED, "Connection terminated", a connect timeout).
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  // 08 connection exception, 53 insufficient resources, 57 operator intervention
  // (shutdown, cannot connect now, statement timeout), 55P03 lock not available.
  return /^(08|53|57)/.test(code) || code === '55P03';
}

/** The server a connection string names, for messages: user, host, port and database, never the password. */
export function describeServer(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const user = url.username === '' ? '' : `${decodeURIComponent(url.username)}@`;
    return `${user}${url.host === '' ? '(local socket)' : url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '(the server in RECEPTION_DATABASE_URL)';
  }
}
