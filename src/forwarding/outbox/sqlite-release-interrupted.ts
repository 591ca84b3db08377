import type { Database } from '../../platform/db/sqlite/driver.js';
import { budgetSpent, FORWARD_COLUMNS, forwardFromRow, type ForwardRow } from './forward-row.js';
import type { RetryBudget } from './outbox.js';
import type { DeadLetter } from './dead-letters.js';

/** The error recorded for an attempt that a stop of the process cut (CONTRACT 6 "After a crash"). */
export const INTERRUPTED = 'interrupted: Reception stopped during this attempt (a crash); attempted again';

/**
 * Releases every forward still `delivering` in one transaction, at start
 * (see `SqliteOutbox.releaseInterrupted`): its attempt is recorded as failed
 * with INTERRUPTED (kept if the outcome was recorded after all), and the
 * forward is pending at `now`, or failed when that attempt spent its budget.
 * Pull consumers' leases too: a consumer of the process that stopped holds
 * nothing any more. Answers how many; the forwards it failed are added to
 * `deadLetters` (docs/alerts.md: they count as dead letters too).
 */
export function releaseInterrupted(
  db: Database,
  now: number,
  budgetOf: (destination: string) => RetryBudget,
  deadLetters: DeadLetter[] = [],
): number {
  const delivering = db.prepare<[], ForwardRow & { attempt_started_at: number | null }>(
    `SELECT ${FORWARD_COLUMNS}, attempt_started_at FROM forwards WHERE status = 'delivering'`,
  );
  const attempt = db.prepare<[string, number, number, number, string]>(
    `INSERT OR IGNORE INTO forward_attempts (forward_id, n, started_at, duration_ms, status, error) VALUES (?, ?, ?, ?, NULL, ?)`,
  );
  const settle = db.prepare<[string, number | null, string, number, string, number]>(
    `UPDATE forwards SET status = ?, next_attempt_at = ?, lease_until = NULL, attempt_started_at = NULL, lease = NULL, lease_owner = NULL,
       last_status = NULL, last_error = ?, updated_at = ?
     WHERE id = ? AND status = 'delivering' AND attempt_count = ?`,
  );
  const failedAt = db.prepare<[string, number, string]>(
    `INSERT INTO destinations (name, last_failure_at, last_error) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
     WHERE coalesce(last_failure_at, 0) <= excluded.last_failure_at`,
  );
  return db
    .transaction(() => {
      const rows = delivering.all();
      const destinations = new Set<string>();
      for (const row of rows) {
        const forward = forwardFromRow(row);
        const startedAt = row.attempt_started_at ?? now;
        attempt.run(forward.id, forward.attemptCount, startedAt, Math.max(0, now - startedAt), INTERRUPTED);
        const failed = budgetSpent(forward, budgetOf(forward.destination), now);
        const changed = settle.run(
          failed ? 'failed' : 'pending',
          failed ? null : now,
          INTERRUPTED,
          now,
          forward.id,
          forward.attemptCount,
        );
        if (failed && changed.changes > 0) deadLetters.push({ destination: forward.destination, error: INTERRUPTED });
        destinations.add(forward.destination);
      }
      for (const name of destinations) failedAt.run(name, now, INTERRUPTED);
      return rows.length;
    })
    .immediate();
}
