import { randomUUID } from 'node:crypto';
import type { NewDelivery } from '../../../deliveries/delivery-store.js';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import type { AttemptOutcome, ClaimedForward, ClaimRequest, Forward, RetryBudget } from '../outbox.js';
import { newDelivery } from '../../../../test/helpers/delivery-factory.js';

/** The outbox contract's clock: every time in it is T0 plus an offset the test chooses. */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

/** Room enough that a test spends its attempts or age only where it means to. */
export const BUDGET: RetryBudget = { attempts: 5, maxAgeMs: 3_600_000 };

export const LEASE_MS = 30_000;

/** A delivery stored with its forwards, as the tests refer to it. */
export interface Delivered {
  id: string;
  seq: number;
  source: string;
  duplicate: boolean;
  /** The forward ids asked for, in the order of `to`. */
  forwards: string[];
}

export interface DeliverOptions {
  source?: string;
  /** The destinations, one forward each. */
  to?: string | readonly string[];
  /** receivedAt, which is also the forwards' createdAt and first due time. */
  at?: number;
  dedupKey?: string;
  /** Forward ids to use instead of fresh ones. */
  forwardIds?: readonly string[];
  /** The transform of each forward's route, in the order of `to` (CONTRACT 10). */
  transforms?: ReadonlyArray<string | null>;
}

/** The delivery to append with its forwards (see `deliver`). */
export function deliveryTo(
  options: DeliverOptions = {},
): NewDelivery & { forwards: Array<{ id: string; destination: string; transform?: string | null }> } {
  const to = typeof options.to === 'string' ? [options.to] : (options.to ?? ['app']);
  return {
    ...newDelivery({ source: options.source ?? 'github', receivedAt: options.at ?? T0, dedupKey: options.dedupKey ?? null }),
    forwards: to.map((destination, i) => ({
      id: options.forwardIds?.[i] ?? `fwd_${randomUUID()}`,
      destination,
      ...(options.transforms?.[i] === undefined ? {} : { transform: options.transforms[i] }),
    })),
  };
}

/** Appends one delivery per option set, in one batch. */
export async function deliverAll(store: InboxDatabase, batch: readonly DeliverOptions[]): Promise<Delivered[]> {
  const deliveries = batch.map(deliveryTo);
  const outcomes = await store.append(deliveries);
  return deliveries.map((d, i) => {
    const outcome = outcomes[i];
    if (outcome === undefined) throw new Error(`no outcome for delivery ${i}`);
    return {
      id: outcome.id,
      seq: outcome.seq,
      source: d.source,
      duplicate: outcome.duplicate,
      forwards: d.forwards.map((f) => f.id),
    };
  });
}

export async function deliver(store: InboxDatabase, options: DeliverOptions = {}): Promise<Delivered> {
  const [delivered] = await deliverAll(store, [options]);
  if (delivered === undefined) throw new Error('nothing delivered');
  return delivered;
}

/** The first forward of a delivery (most tests make one). */
export function forwardOf(delivered: Delivered | undefined): string {
  const id = delivered?.forwards[0];
  if (id === undefined) throw new Error('the delivery has no forward');
  return id;
}

/** Claims at `now` with the contract's defaults (destination `app`, 10 at most, BUDGET, LEASE_MS). */
export function claim(store: InboxDatabase, now: number, request: Partial<ClaimRequest> = {}): Promise<ClaimedForward[]> {
  return store.outbox.claim({ destination: 'app', max: 10, leaseMs: LEASE_MS, ordered: false, budget: BUDGET, now, ...request });
}

/** The ids a claim handed out, in its order. */
export const ids = (claimed: readonly ClaimedForward[]): string[] => claimed.map((c) => c.forward.id);

/** The outcome of a claimed forward's current attempt, started at `startedAt` and lasting 25 ms unless told. */
export function outcome(
  forward: Pick<Forward, 'id' | 'destination' | 'attemptCount'>,
  startedAt: number,
  next: AttemptOutcome['next'],
  result: Partial<Pick<AttemptOutcome, 'status' | 'error' | 'durationMs' | 'n' | 'transform'>> = {},
): AttemptOutcome {
  const succeeded = next.state === 'succeeded';
  return {
    forwardId: forward.id,
    destination: forward.destination,
    n: result.n ?? forward.attemptCount,
    startedAt,
    durationMs: result.durationMs ?? 25,
    status: result.status === undefined ? (succeeded ? 200 : 503) : result.status,
    error: result.error === undefined ? (succeeded ? null : 'HTTP 503') : result.error,
    ...(result.transform === undefined ? {} : { transform: result.transform }),
    next,
  };
}

/** The forward, which must exist. */
export async function forward(store: InboxDatabase, id: string): Promise<Forward> {
  const found = await store.outbox.get(id);
  if (found === undefined) throw new Error(`no forward ${id}`);
  return found;
}

/** The one claimed forward with this id. */
export function claimedOne(claimed: readonly ClaimedForward[], id?: string): Forward {
  const found = id === undefined ? claimed[0] : claimed.find((c) => c.forward.id === id);
  if (found === undefined) throw new Error(`forward ${id ?? '(first)'} was not claimed`);
  return found.forward;
}
