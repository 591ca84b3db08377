import type { AppendOutcome, NewDelivery, NewForward, StoredDelivery } from '../deliveries/delivery-store.js';
import type { PushDispatcher } from './dispatcher.js';
import { newLease } from './outbox/forward-row.js';
import type { ClaimedForward, Forward } from './outbox/outbox.js';

export type Append = (batch: readonly NewDelivery[]) => Promise<AppendOutcome[]>;

export interface CommitLeasing {
  /** The dispatcher of a push destination on this instance; undefined: none (pull, unknown, stopping). */
  dispatcher(destination: string): PushDispatcher | undefined;
  /** This instance's lease owner (its LeaseKeeper). */
  owner: string;
  leaseMs: number;
}

interface Offer {
  dispatcher: PushDispatcher;
  index: number;
  forward: NewForward & { lease: NonNullable<NewForward['lease']> };
}

/**
 * Commits a batch with `append`, each forward whose destination's dispatcher
 * has room (`acceptsAtCommit`) leased to this instance in the same
 * transaction, as a claim would lease it; after the commit each forward
 * stored so is handed to its dispatcher with its delivery, from memory: no
 * claim transaction and no wake-up between the commit and the send (see
 * docs/forwarding.md, "How a forward goes from the commit to the wire").
 * A forward the store kept `pending` (its destination paused, its delivery
 * a duplicate) or a commit that failed gives the dispatcher its room back.
 */
export async function appendLeasing(batch: readonly NewDelivery[], append: Append, ctx: CommitLeasing): Promise<AppendOutcome[]> {
  const offers: Offer[] = [];
  const now = Date.now();
  let leasedBatch: NewDelivery[] | undefined;
  batch.forEach((delivery, index) => {
    const forwards = delivery.forwards;
    if (forwards === undefined || forwards.length === 0) return;
    let changed = false;
    const leased = forwards.map((forward): NewForward => {
      const dispatcher = ctx.dispatcher(forward.destination);
      if (dispatcher === undefined || !dispatcher.acceptsAtCommit()) return forward;
      dispatcher.reserveAtCommit();
      const offer = {
        ...forward,
        lease: { owner: ctx.owner, token: newLease(), startedAt: now, until: now + ctx.leaseMs },
      };
      offers.push({ dispatcher, index, forward: offer });
      changed = true;
      return offer;
    });
    if (!changed) return;
    leasedBatch ??= [...batch];
    leasedBatch[index] = { ...delivery, forwards: leased };
  });
  if (leasedBatch === undefined) return append(batch);
  let outcomes: AppendOutcome[];
  try {
    outcomes = await append(leasedBatch);
  } catch (error) {
    for (const offer of offers) offer.dispatcher.takeAtCommit(undefined, 0);
    throw error;
  }
  const committedAt = Date.now();
  for (const { dispatcher, index, forward } of offers) {
    const delivery = leasedBatch[index];
    const outcome = outcomes[index];
    const position = outcome?.leased?.find((l) => l.id === forward.id)?.position;
    if (delivery === undefined || outcome === undefined || outcome.duplicate || position === undefined) {
      dispatcher.takeAtCommit(undefined, 0);
      continue;
    }
    dispatcher.takeAtCommit(claimedAt(delivery, outcome, forward, position), committedAt);
  }
  return outcomes;
}

/** The forward as the commit stored it, with its delivery: what a claim would have read back. */
function claimedAt(delivery: NewDelivery, outcome: AppendOutcome, forward: Offer['forward'], position: number): ClaimedForward {
  const { lease } = forward;
  const leased = new Set(outcome.leased?.map((l) => l.id));
  const { forwards, eventType, ...rest } = delivery;
  const stored: StoredDelivery = {
    ...rest,
    seq: outcome.seq,
    eventType: eventType === undefined || eventType === null || eventType === '' ? null : eventType,
    forwards: (forwards ?? []).map((f) => ({ destination: f.destination, status: leased.has(f.id) ? 'delivering' : 'pending' })),
  };
  const row: Forward = {
    id: forward.id,
    position,
    deliveryId: delivery.id,
    deliverySeq: outcome.seq,
    source: delivery.source,
    destination: forward.destination,
    status: 'delivering',
    attemptCount: 1,
    budgetUsed: 1,
    budgetStartedAt: delivery.receivedAt,
    nextAttemptAt: lease.until,
    leaseUntil: lease.until,
    lease: lease.token,
    createdAt: delivery.receivedAt,
    updatedAt: delivery.receivedAt,
    lastStatus: null,
    lastError: null,
    transform: forward.transform ?? null,
  };
  return { forward: row, delivery: stored };
}
