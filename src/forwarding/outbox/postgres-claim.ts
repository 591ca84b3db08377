import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { DELIVERY_COLUMNS, deliveryFromRow, type DeliveryRow } from '../../deliveries/delivery-row.js';
import type { ForwardSummary } from '../../deliveries/delivery-store.js';
import {
  budgetSpent,
  FORWARD_COLUMNS,
  forwardFromRow,
  LEASE_EXPIRED,
  newLease,
  withinBytes,
  type ForwardRow,
} from './forward-row.js';
import type { ClaimedForward, ClaimRequest } from './outbox.js';
import { FAILED_AT, HEADS, INSERT_ATTEMPT, SETTLE, type LeasedRow } from './postgres-outbox-sql.js';
import type { DeadLetter } from './dead-letters.js';

/** The size of a forward's delivery body: octet_length() of a TOASTed value reads its length, not the value. */
const SIZE = '(SELECT octet_length(raw) FROM deliveries d WHERE d.seq = forwards.delivery_seq) AS size';

/**
 * Taken (with a hash of the schema and destination as the second key) by
 * each ordered claim until it commits. The heads are read from a snapshot:
 * without it, a claim could read a retried older forward as its source's
 * head while another instance's claim of a later one was not yet committed,
 * and both would be delivering at once. Ordered claims of one destination
 * thus take turns; claims are short, and a source goes one at a time anyway.
 */
const ORDERED_CLAIM_LOCK = 7_305_162;

/**
 * A claim on PostgreSQL (see `Outbox.claim`), in one transaction: the
 * destination's forwards whose lease ran out get an attempt that says so and
 * wait again (or fail, their budget spent), then its due forwards are taken,
 * each with a new lease. `FOR UPDATE SKIP LOCKED` gives each forward to one
 * of the instances that claim at once. The forwards failed so are added to `deadLetters`.
 */
export async function claimForwards(
  db: PostgresRunner,
  request: ClaimRequest,
  deadLetters: DeadLetter[] = [],
): Promise<ClaimedForward[]> {
  const { destination, now } = request;
  // Nothing due and no lease run out (most wake-ups, once forwards are leased at their commit): one
  // statement, no transaction. A forward committed just after it wakes the dispatcher again.
  const due = await db.execute(
    `SELECT 1 FROM forwards WHERE status IN ('pending', 'delivering') AND destination = $1 AND next_attempt_at <= $2 LIMIT 1`,
    [destination, now],
  );
  if (due.rowCount === 0) return [];
  return db.transaction(async (client) => {
    // A transaction tried again starts over.
    deadLetters.length = 0;
    if (request.ordered) {
      await client.query(`SELECT pg_advisory_xact_lock(${ORDERED_CLAIM_LOCK}, hashtext(current_schema() || '/' || $1))`, [
        destination,
      ]);
    }
    const expired = await client.query<LeasedRow>(
      `SELECT ${FORWARD_COLUMNS}, attempt_started_at FROM forwards
       WHERE status = 'delivering' AND destination = $1 AND next_attempt_at <= $2 FOR UPDATE SKIP LOCKED`,
      [destination, now],
    );
    for (const row of expired.rows) {
      const forward = forwardFromRow(row);
      const startedAt = row.attempt_started_at === null ? now : Number(row.attempt_started_at);
      await client.query(INSERT_ATTEMPT, [
        forward.id,
        forward.attemptCount,
        startedAt,
        Math.max(0, now - startedAt),
        null,
        LEASE_EXPIRED,
      ]);
      const failed = budgetSpent(forward, request.budget, now);
      if (failed) deadLetters.push({ destination, error: LEASE_EXPIRED });
      await client.query(SETTLE, [
        failed ? 'failed' : 'pending',
        failed ? null : now,
        null,
        LEASE_EXPIRED,
        now,
        forward.id,
        forward.attemptCount,
      ]);
    }
    if (expired.rows.length > 0) await client.query(FAILED_AT, [destination, now, LEASE_EXPIRED]);
    if (request.max <= 0) return [];
    // Nothing while paused, nor while its circuit is open or half open (docs/circuits.md) but for the probe: one round trip.
    const held = await client.query<{ paused: boolean | null; circuit: string | null }>(
      `SELECT (SELECT paused FROM destinations WHERE name = $1) AS paused,
         (SELECT state FROM destination_circuits WHERE name = $1) AS circuit`,
      [destination],
    );
    const row = held.rows[0];
    if (row?.paused === true || (request.probe !== true && (row?.circuit ?? 'closed') !== 'closed')) return [];
    const due = request.ordered
      ? await client.query<{ position: string; size: string | null }>(
          `SELECT position, ${SIZE} FROM forwards WHERE position IN (SELECT position FROM (${HEADS}) heads)
         AND status = 'pending' AND next_attempt_at <= $2
         ORDER BY next_attempt_at, position LIMIT $3 FOR UPDATE SKIP LOCKED`,
          [destination, now, request.max],
        )
      : await client.query<{ position: string; size: string | null }>(
          `SELECT position, ${SIZE} FROM forwards WHERE status = 'pending' AND destination = $1 AND next_attempt_at <= $2
         ORDER BY next_attempt_at, position LIMIT $3 FOR UPDATE SKIP LOCKED`,
          [destination, now, request.max],
        );
    const chosen = withinBytes(due.rows, request.maxBytes);
    if (chosen.length === 0) return [];
    const leaseUntil = now + request.leaseMs;
    // Each forward with its own new lease token.
    const taken = await client.query<ForwardRow>(
      `UPDATE forwards SET status = 'delivering', attempt_count = attempt_count + 1, budget_used = budget_used + 1,
         attempt_started_at = $1, lease_until = $2, next_attempt_at = $2, updated_at = $1, lease = t.l, lease_owner = $5
       FROM unnest($3::bigint[], $4::text[]) AS t (p, l)
       WHERE position = t.p AND status = 'pending' RETURNING ${FORWARD_COLUMNS}`,
      [now, leaseUntil, chosen.map((row) => row.position), chosen.map(() => newLease()), request.owner ?? null],
    );
    const forwards = taken.rows.map(forwardFromRow).sort((a, b) => a.position - b.position);
    const rows = await client.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq = ANY($1::bigint[])`, [
      forwards.map((f) => f.deliverySeq),
    ]);
    const summaries = await client.query<{ delivery_seq: string; destination: string; status: ForwardSummary['status'] }>(
      'SELECT delivery_seq, destination, status FROM forwards WHERE delivery_seq = ANY($1::bigint[]) ORDER BY position',
      [forwards.map((f) => f.deliverySeq)],
    );
    const deliveries = new Map(
      rows.rows.map((row) => {
        const delivery = deliveryFromRow(row);
        delivery.forwards = summaries.rows
          .filter((s) => Number(s.delivery_seq) === delivery.seq)
          .map((s) => ({ destination: s.destination, status: s.status }));
        return [delivery.seq, delivery];
      }),
    );
    const claimed: ClaimedForward[] = [];
    for (const forward of forwards) {
      const delivery = deliveries.get(forward.deliverySeq);
      if (delivery !== undefined) claimed.push({ forward, delivery });
    }
    return claimed;
  });
}
