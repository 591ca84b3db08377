// The leases of claimed forwards on PostgreSQL: renewed, released unattempted, acked or nacked (see `Outbox`).

import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { holdable } from '../../platform/db/postgres/text-values.js';
import { budgetSpent, FORWARD_COLUMNS, forwardFromRow, holdsLease } from './forward-row.js';
import type { LeaseAnswer, RetryBudget } from './outbox.js';
import type { DeadLetter } from './dead-letters.js';
import { FAILED_AT, INSERT_ATTEMPT, SETTLE, SUCCEEDED_AT, type LeasedRow } from './postgres-outbox-sql.js';

/**
 * Extends the leases of the forwards this owner is delivering. SKIP LOCKED: a renewal never waits, so it cannot deadlock with a settle
 * of the same forwards (locked in another order); a forward locked is being
 * settled, or taken over because its lease ran out, and is not renewed.
 */
export async function renewOwnedLeases(db: PostgresRunner, owner: string, until: number): Promise<string[]> {
  const result = await db.execute<{ id: string }>(
    `UPDATE forwards SET lease_until = $1, next_attempt_at = $1 WHERE position IN (
       SELECT position FROM forwards WHERE status = 'delivering' AND lease_owner = $2 FOR NO KEY UPDATE SKIP LOCKED)
     AND status = 'delivering' AND lease_owner = $2 RETURNING id`,
    [until, owner],
  );
  return result.rows.map((row) => row.id);
}

export async function releaseForwards(
  db: PostgresRunner,
  forwards: ReadonlyArray<{ id: string; n: number }>,
  now: number,
): Promise<void> {
  if (forwards.length === 0) return;
  await db.execute(
    `UPDATE forwards AS f SET status = 'pending', attempt_count = f.attempt_count - 1, budget_used = greatest(0, f.budget_used - 1),
       next_attempt_at = $1, lease_until = NULL, lease = NULL, attempt_started_at = NULL, updated_at = $1
     FROM unnest($2::text[], $3::int[]) AS r (id, n)
     WHERE f.id = r.id AND f.status = 'delivering' AND f.attempt_count = r.n`,
    [now, forwards.map((f) => f.id), forwards.map((f) => f.n)],
  );
}

/**
 * Ack (no `nack`) or nack, fenced: only the forward's current lease, before
 * it runs out, settles it; the row stays locked from the compare to the set.
 * A nack that fails the forward adds it to `nack.failed`.
 */
export async function finishLease(
  db: PostgresRunner,
  id: string,
  lease: string,
  now: number,
  nack?: { at: number; budget: RetryBudget; failed?: DeadLetter[] },
): Promise<LeaseAnswer> {
  if (!holdable(id)) return 'not_found';
  return db.transaction(async (client) => {
    if (nack?.failed !== undefined) nack.failed.length = 0;
    const found = await client.query<LeasedRow>(
      `SELECT ${FORWARD_COLUMNS}, attempt_started_at FROM forwards WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const row = found.rows[0];
    if (row === undefined) return 'not_found';
    const forward = forwardFromRow(row);
    // A lease that holds is one Reception wrote (base64url), so holdable.
    if (!holdsLease(forward, lease, now)) return 'lease_lost';
    const startedAt = row.attempt_started_at === null ? now : Number(row.attempt_started_at);
    await client.query(INSERT_ATTEMPT, [
      id,
      forward.attemptCount,
      startedAt,
      Math.max(0, now - startedAt),
      null,
      nack === undefined ? null : 'nack',
    ]);
    if (nack === undefined) {
      await client.query(
        `UPDATE forwards SET status = 'succeeded', next_attempt_at = NULL, lease_until = NULL, lease = NULL,
        attempt_started_at = NULL, last_status = NULL, last_error = NULL, updated_at = $1
        WHERE id = $2 AND status = 'delivering' AND lease = $3`,
        [now, id, lease],
      );
      await client.query(SUCCEEDED_AT, [forward.destination, now]);
    } else {
      const failed = budgetSpent(forward, nack.budget, now);
      if (failed) nack.failed?.push({ destination: forward.destination, error: 'nack' });
      await client.query(SETTLE, [
        failed ? 'failed' : 'pending',
        failed ? null : nack.at,
        null,
        'nack',
        now,
        id,
        forward.attemptCount,
      ]);
      await client.query(FAILED_AT, [forward.destination, now, 'nack']);
    }
    return 'ok';
  });
}
