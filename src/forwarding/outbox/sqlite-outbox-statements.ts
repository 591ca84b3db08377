import type { Database } from '../../platform/db/sqlite/driver.js';
import { DELIVERY_COLUMNS, type DeliveryRow } from '../../deliveries/delivery-row.js';
import {
  ATTEMPT_COLUMNS,
  FORWARD_COLUMNS,
  LAST_ATTEMPT_COLUMN,
  type AttemptRow,
  type ForwardRow,
  type ListedForwardRow,
} from './forward-row.js';
import type { ForwardSummary } from '../../deliveries/delivery-store.js';

export const UNSETTLED = "('pending', 'delivering')";

/** The size of a forward's delivery body: length() of a blob reads its length, not the blob. */
const SIZE = '(SELECT length(raw) FROM deliveries WHERE seq = forwards.delivery_seq) AS size';

/**
 * The head of each source of a destination (ordered claims): the forward it
 * has delivering, if any, else its oldest unsettled one by seq. A failed
 * forward retried, or an older delivery sent again, is older than the one
 * delivering but waits for it: one at a time per source.
 */
const HEADS = `SELECT position, delivery_seq, status, next_attempt_at, row_number() OVER (
    PARTITION BY source ORDER BY status = 'delivering' DESC, delivery_seq, position) AS rank
  FROM forwards WHERE destination = ? AND status IN ${UNSETTLED}`;

/** The outbox's statements on one connection, prepared once (sqlite-outbox.ts runs them). */
export function outboxStatements(db: Database) {
  const prepare = <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
  return {
    insert: prepare<[string, number | bigint, string, string, string, number, number, number, number, string | null]>(
      `INSERT INTO forwards (id, delivery_seq, delivery_id, source, destination, status, budget_started_at,
         next_attempt_at, created_at, updated_at, transform)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)`,
    ),
    // Leased at the commit (NewForward.lease): as `take` would leave it, its first attempt taken.
    insertLeased: prepare<
      [
        {
          id: string;
          seq: number | bigint;
          deliveryId: string;
          source: string;
          destination: string;
          now: number;
          startedAt: number;
          until: number;
          lease: string;
          owner: string;
          transform: string | null;
        },
      ]
    >(
      `INSERT INTO forwards (id, delivery_seq, delivery_id, source, destination, status, attempt_count, budget_used,
         budget_started_at, next_attempt_at, lease_until, lease, lease_owner, attempt_started_at, created_at, updated_at, transform)
       VALUES (@id, @seq, @deliveryId, @source, @destination, 'delivering', 1, 1,
         @now, @until, @until, @lease, @owner, @startedAt, @now, @now, @transform)`,
    ),
    // Whether a claim has anything to do: a forward due, or a lease run out (by forwards_due).
    anyDue: prepare<[string, number], { one: number }>(
      `SELECT 1 AS one FROM forwards WHERE status IN ${UNSETTLED} AND destination = ? AND next_attempt_at <= ? LIMIT 1`,
    ),
    expired: prepare<[string, number], ForwardRow & { attempt_started_at: number | null }>(
      `SELECT ${FORWARD_COLUMNS}, attempt_started_at FROM forwards
       WHERE status = 'delivering' AND destination = ? AND next_attempt_at <= ?`,
    ),
    // With each delivery's size (length() of a blob reads its length, not
    // the blob), for the claim's byte bound (withinBytes).
    due: prepare<[string, number, number], { position: number; size: number | null }>(
      `SELECT position, ${SIZE} FROM forwards WHERE status = 'pending' AND destination = ? AND next_attempt_at <= ?
       ORDER BY next_attempt_at, position LIMIT ?`,
    ),
    // The heads (see HEADS), claimable when pending and due.
    dueHeads: prepare<[string, number, number], { position: number; size: number | null }>(
      `SELECT position, ${SIZE} FROM (${HEADS}) AS forwards
       WHERE rank = 1 AND status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, position LIMIT ?`,
    ),
    // `+status`: by the primary key. On `status` alone SQLite chose the due
    // index and read every pending forward for each claim (167 a second
    // drained, 1.1 ms of CPU each, with 20,000 waiting).
    // One forward, with its own new lease token; lease_owner: the instance of a push claim (renewed), NULL for a pull one.
    take: prepare<[number, number, number, number, string, string | null, number], ForwardRow>(
      `UPDATE forwards SET status = 'delivering', attempt_count = attempt_count + 1, budget_used = budget_used + 1,
         attempt_started_at = ?, lease_until = ?, next_attempt_at = ?, updated_at = ?, lease = ?, lease_owner = ?
       WHERE position = ? AND +status = 'pending'
       RETURNING ${FORWARD_COLUMNS}`,
    ),
    deliveriesBySeq: prepare<[string], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq IN (SELECT value FROM json_each(?))`,
    ),
    // A pull consumer's ack: compare-and-set on the lease.
    succeed: prepare<[number, string, string]>(
      `UPDATE forwards SET status = 'succeeded', next_attempt_at = NULL, lease_until = NULL, lease = NULL,
         attempt_started_at = NULL, last_status = NULL, last_error = NULL, updated_at = ?
       WHERE id = ? AND status = 'delivering' AND lease = ?`,
    ),
    release: prepare<[{ now: number; id: string; n: number }]>(
      `UPDATE forwards SET status = 'pending', attempt_count = attempt_count - 1, budget_used = max(0, budget_used - 1),
         next_attempt_at = @now, lease_until = NULL, lease = NULL, attempt_started_at = NULL, updated_at = @now
       WHERE id = @id AND status = 'delivering' AND attempt_count = @n`,
    ),
    // By forwards_due (status first); the expiry of a lease is next_attempt_at while delivering.
    renew: prepare<[number, number, string], { id: string }>(
      `UPDATE forwards SET lease_until = ?, next_attempt_at = ? WHERE status = 'delivering' AND lease_owner = ? RETURNING id`,
    ),
    settle: prepare<[string, number | null, number | null, string | null, number, string, number]>(
      `UPDATE forwards SET status = ?, next_attempt_at = ?, lease_until = NULL, lease = NULL, attempt_started_at = NULL,
         last_status = ?, last_error = ?, updated_at = ?
       WHERE id = ? AND status = 'delivering' AND attempt_count = ?`,
    ),
    // Only for a forward that still exists and has taken attempt n (an outcome
    // may come back after its delivery was deleted); an attempt already recorded stays.
    // An attempt, with the destination's answer when one came (an outcome's); null for a lease run out, an ack or a nack.
    attempt: prepare<
      [
        {
          id: string;
          n: number;
          startedAt: number;
          durationMs: number;
          status: number | null;
          error: string | null;
          response: string | null;
          transformName: string | null;
          transformVersion: string | null;
        },
      ]
    >(
      `INSERT OR IGNORE INTO forward_attempts (forward_id, n, started_at, duration_ms, status, error, response,
         transform_name, transform_version)
       SELECT id, @n, @startedAt, @durationMs, @status, @error, @response, @transformName, @transformVersion
       FROM forwards WHERE id = @id AND attempt_count >= @n`,
    ),
    succeededAt: prepare<[string, number]>(
      `INSERT INTO destinations (name, last_success_at) VALUES (?, ?)
       ON CONFLICT (name) DO UPDATE SET last_success_at = max(coalesce(last_success_at, 0), excluded.last_success_at)`,
    ),
    failedAt: prepare<[string, number, string | null]>(
      `INSERT INTO destinations (name, last_failure_at, last_error) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
       WHERE coalesce(last_failure_at, 0) <= excluded.last_failure_at`,
    ),
    get: prepare<[string], ForwardRow & { attempt_started_at: number | null }>(
      `SELECT ${FORWARD_COLUMNS}, attempt_started_at FROM forwards WHERE id = ?`,
    ),
    ofDelivery: prepare<[string], ForwardRow>(
      `SELECT ${FORWARD_COLUMNS} FROM forwards WHERE delivery_seq = (SELECT seq FROM deliveries WHERE id = ?) ORDER BY position`,
    ),
    attemptsOf: prepare<[string], AttemptRow>(
      `SELECT ${ATTEMPT_COLUMNS} FROM forward_attempts
       WHERE forward_id IN (SELECT value FROM json_each(?)) ORDER BY forward_id, n`,
    ),
    summaries: prepare<[string], { delivery_seq: number; destination: string; status: ForwardSummary['status'] }>(
      `SELECT delivery_seq, destination, status FROM forwards
       WHERE delivery_seq IN (SELECT value FROM json_each(?)) ORDER BY position`,
    ),
    list: prepare<
      [{ before: number; destination: string | null; status: string | null; source: string | null; limit: number }],
      ListedForwardRow
    >(
      `SELECT ${FORWARD_COLUMNS}, ${LAST_ATTEMPT_COLUMN} FROM forwards WHERE position < @before
         AND (@destination IS NULL OR destination = @destination) AND (@status IS NULL OR status = @status)
         AND (@source IS NULL OR source = @source)
       ORDER BY position DESC LIMIT @limit`,
    ),
    retryIds: prepare<[{ now: number; ids: string }]>(
      `UPDATE forwards SET status = 'pending', budget_used = 0, budget_started_at = @now, next_attempt_at = @now, lease = NULL,
         updated_at = @now
       WHERE +status = 'failed' AND id IN (SELECT value FROM json_each(@ids))`,
    ),
    retryWhere: prepare<
      [{ now: number; destination: string | null; source: string | null; since: number | null; until: number | null }]
    >(
      `UPDATE forwards SET status = 'pending', budget_used = 0, budget_started_at = @now, next_attempt_at = @now, lease = NULL,
         updated_at = @now
       WHERE status = 'failed' AND (@destination IS NULL OR destination = @destination) AND (@source IS NULL OR source = @source)
         AND (@since IS NULL OR created_at >= @since) AND (@until IS NULL OR created_at < @until)`,
    ),
    cancel: prepare<[number, string]>(
      `UPDATE forwards SET status = 'cancelled', next_attempt_at = NULL, lease_until = NULL, lease = NULL, attempt_started_at = NULL,
         updated_at = ?
       WHERE id = ? AND status IN ('pending', 'delivering', 'failed')`,
    ),
    create: prepare<[string, string, number, number, number, number, string | null, string], ForwardRow>(
      `INSERT INTO forwards (id, delivery_seq, delivery_id, source, destination, status, budget_started_at,
         next_attempt_at, created_at, updated_at, transform)
       SELECT ?, seq, id, source, ?, 'pending', ?, ?, ?, ?, ? FROM deliveries WHERE id = ?
       RETURNING ${FORWARD_COLUMNS}`,
    ),
    counts: prepare<[], { destination: string; status: string; count: number; oldest: number }>(
      `SELECT destination, status, count(*) AS count, min(created_at) AS oldest FROM forwards
       WHERE status IN ('pending', 'delivering', 'failed') GROUP BY destination, status`,
    ),
    destinationRows: prepare<
      [],
      {
        name: string;
        paused: number;
        last_success_at: number | null;
        last_failure_at: number | null;
        last_error: string | null;
      }
    >('SELECT name, paused, last_success_at, last_failure_at, last_error FROM destinations'),
    paused: prepare<[string], { paused: number }>('SELECT paused FROM destinations WHERE name = ?'),
    pause: prepare<[string, number]>(
      'INSERT INTO destinations (name, paused) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET paused = excluded.paused',
    ),
    nextDue: prepare<[string], { at: number | null }>(
      `SELECT min(next_attempt_at) AS at FROM forwards WHERE status IN ${UNSETTLED} AND destination = ?`,
    ),
    nextDueHead: prepare<[string], { at: number | null }>(`SELECT min(next_attempt_at) AS at FROM (${HEADS}) WHERE rank = 1`),
  };
}

export type OutboxStatements = ReturnType<typeof outboxStatements>;
