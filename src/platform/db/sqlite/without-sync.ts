import type { Database } from './driver.js';

/**
 * Runs `work` (one transaction) with `synchronous = NORMAL`, then puts the
 * connection's own level back: in WAL mode its commit does not wait for the
 * disk, and the next durable commit (a delivery's) syncs the WAL with these
 * frames in it. For writes that a power cut may lose without breaking a
 * promise: they are done again (an outbox claim, the search index's step).
 * Deliveries keep the store's durability.
 */
export function withoutSync<T>(db: Database, durableLevel: number, work: () => T): T {
  if (durableLevel <= 1) return work();
  db.pragma('synchronous = NORMAL');
  try {
    return work();
  } finally {
    db.pragma(`synchronous = ${durableLevel}`);
  }
}

/** The connection's `synchronous` level (2, FULL, with the default durability). */
export function syncLevel(db: Database): number {
  return Number(db.pragma('synchronous', { simple: true }));
}
