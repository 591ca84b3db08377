// Where a delivery's forwards stand, for its row's badge (forward-badges.ts):
// each destination by its latest forward. No DOM here, so that Node-side
// tests can import it.

import type { ForwardStatus, ForwardSummary } from './delivery.ts';

/** The one state a set of forwards shows: a failure first, then work still to do. */
export type BadgeState = 'failed' | 'forwarding' | 'forwarded' | 'cancelled';

/**
 * The latest forward to each destination, in the order the destinations
 * first appear. `forwards` is oldest first, as a Delivery's JSON and
 * `GET /api/deliveries/{id}/forwards` list them (CONTRACT 6): a later one to
 * the same destination (a "send again") replaces the earlier.
 */
export function latestPerDestination(forwards: readonly ForwardSummary[]): ForwardSummary[] {
  const latest = new Map<string, ForwardSummary>();
  for (const forward of forwards) latest.set(forward.destination, { destination: forward.destination, status: forward.status });
  return [...latest.values()];
}

/** The state of the latest forward to each destination, in one word. */
export function badgeState(all: readonly ForwardSummary[]): BadgeState {
  const forwards = latestPerDestination(all);
  const has = (status: ForwardStatus): boolean => forwards.some((f) => f.status === status);
  if (has('failed')) return 'failed';
  if (has('pending') || has('delivering')) return 'forwarding';
  if (has('succeeded')) return 'forwarded';
  return 'cancelled';
}

/**
 * A row's forwards after reading the newest ones (newest first, as
 * `GET /api/forwards` lists them): for each destination that they name, the
 * newest one replaces what the row had. A delivery sent again long ago may
 * have older forwards to that destination beyond what was read; the newest
 * one is the one that counts. The answer is oldest first, as a row keeps them.
 */
export function mergeForwards(current: readonly ForwardSummary[], newest: readonly ForwardSummary[]): ForwardSummary[] {
  const latest = new Map<string, ForwardSummary>();
  for (const f of newest)
    if (!latest.has(f.destination)) latest.set(f.destination, { destination: f.destination, status: f.status });
  return [...latestPerDestination(current).filter((f) => !latest.has(f.destination)), ...latest.values()];
}
