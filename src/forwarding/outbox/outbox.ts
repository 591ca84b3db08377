import type { NewForward, StoredDelivery } from '../../deliveries/delivery-store.js';
import type { ForwardStatus } from '../../api/forward-status.js';
import type { DeadLetterListener } from './dead-letters.js';
import type { Breaker, Circuit, CircuitChange } from '../circuit/circuit.js';

export { FORWARD_STATUSES, type ForwardStatus } from '../../api/forward-status.js';

/**
 * Glossary (CONTRACT 6)
 * - destination: a place the config file names, where deliveries are handed on.
 * - forward: one delivery on its way to one destination; a row of the outbox,
 *   created in the transaction that stores its delivery.
 * - attempt: one try at handing a forward over (an HTTP request, a pull
 *   consumer's claim); numbered from 1 per forward, never reset.
 * - budget: the attempts and the age a forward may still spend before it is
 *   `failed` (the dead letter); a retry gives it a fresh one.
 * - lease: the time a claimed forward belongs to one instance or consumer;
 *   when it runs out, the attempt counts as failed and anyone may claim it.
 * - position: a forward's place in the outbox, in creation order; the list's cursor.
 */

export interface Forward {
  id: string;
  position: number;
  deliveryId: string;
  deliverySeq: number;
  source: string;
  destination: string;
  status: ForwardStatus;
  /** Attempts made so far, over every retry; the next one is number `attemptCount + 1`. */
  attemptCount: number;
  /** Attempts spent of the current budget (reset by a retry). */
  budgetUsed: number;
  /** When the current budget started (ms): the forward's creation, or its last retry. */
  budgetStartedAt: number;
  /** When it may next be attempted (ms); null once settled. */
  nextAttemptAt: number | null;
  /** While `delivering`: when the lease runs out (ms). */
  leaseUntil: number | null;
  /**
   * While `delivering`: the lease's token, new for every claim (CONTRACT 6,
   * "Leases are fenced"); a pull consumer's ack or nack must present it. Null
   * otherwise: settling, releasing, acking, nacking, an expiry, cancel and retry clear it.
   */
  lease: string | null;
  createdAt: number;
  updatedAt: number;
  lastStatus: number | null;
  lastError: string | null;
  /** The transform of the route that made it (CONTRACT 10), run at each attempt; null: none. */
  transform: string | null;
}

/** A forward as `GET /api/forwards` lists it: with when its latest attempt started (the one in flight, if any; null: none yet). */
export type ListedForward = Forward & { lastAttemptAt: number | null };

/** What a destination answered to an attempt: its headers and the first 4 KiB of its body as text. */
export interface AttemptResponse {
  headers: Array<[string, string]>;
  /** The first RESPONSE_BODY_BYTES of the body, decoded as UTF-8 (invalid bytes replaced). */
  body: string;
  bodyTruncated: boolean;
}

/** How much of a destination's answer is kept per attempt. */
export const RESPONSE_BODY_BYTES = 4096;

export interface Attempt {
  n: number;
  startedAt: number;
  durationMs: number;
  /** The HTTP status the destination answered; null when there was none (timeout, refused, a pull consumer). */
  status: number | null;
  error: string | null;
  /** The destination's answer; null when there was none (a timeout, a broker, a pull consumer). */
  response: AttemptResponse | null;
  /** The transform that ran for this attempt (CONTRACT 10); null when none did. */
  transform: AttemptTransform | null;
}

/** A transform as an attempt ran it: its name and version (CONTRACT 10). */
export interface AttemptTransform {
  name: string;
  version: string;
}

/** What a destination allows a forward to spend before it is `failed`. */
export interface RetryBudget {
  attempts: number;
  maxAgeMs: number;
}

export interface ClaimRequest {
  destination: string;
  max: number;
  /** How long the claimed forwards belong to the claimer, in ms. */
  leaseMs: number;
  now: number;
  /** One forward per source at a time, in seq order (`ordered: true`). */
  ordered: boolean;
  /** Decides what an expired lease turns into (its attempt counts as failed). */
  budget: RetryBudget;
  /**
   * At most this many bytes of delivery bodies (their stored size) in one
   * claim, always at least one forward; none: no bound. Forwards past it are
   * not taken: they stay pending with no attempt spent, and are not read.
   */
  maxBytes?: number;
  /**
   * The instance whose push dispatcher claims (kept as `lease_owner`): it
   * renews these leases while it lives (`renewLeases`). Absent for a pull
   * consumer, whose lease only its visibility timeout ends.
   */
  owner?: string;
  /**
   * Claims even though the destination's circuit is open or half open (the
   * probe, taken with `takeProbe`); without it, such a claim takes nothing.
   */
  probe?: boolean;
}

/** A pull consumer's claim hands out at most this many bytes of delivery bodies (CONTRACT 6). */
export const CLAIM_MAX_BYTES = 8 * 1024 * 1024;

/**
 * What a pull consumer's ack or nack did: `ok`, `not_found` (no such
 * forward), or `lease_lost` (the lease presented is not the forward's
 * current one: it ran out, even if no claim took the forward since, or the
 * forward was claimed again, settled, cancelled or retried); then nothing changed.
 */
export type LeaseAnswer = 'ok' | 'not_found' | 'lease_lost';

/** A claimed forward (now `delivering`, its attempt number taken) with its delivery. */
export interface ClaimedForward {
  forward: Forward;
  delivery: StoredDelivery;
  /**
   * Set when a transform reshaped it (CONTRACT 10): the headers its output
   * adds or replaces, lower-case names (the delivery's body and Content-Type
   * are already the reshaped ones).
   */
  transformHeaders?: Readonly<Record<string, string>>;
}

/** What happened to one attempt, and what the forward becomes. */
export interface AttemptOutcome {
  forwardId: string;
  destination: string;
  /** The attempt's number, as claimed: an outcome for an attempt that is no longer current changes nothing. */
  n: number;
  startedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  /** The destination's answer, kept with the attempt (null or absent: none). */
  response?: AttemptResponse | null;
  /** The transform that ran for this attempt (null or absent: none). */
  transform?: AttemptTransform | null;
  /** `cancelled`: its transform dropped it (CONTRACT 10), nothing was sent. */
  next: { state: 'succeeded' } | { state: 'failed' } | { state: 'cancelled' } | { state: 'pending'; at: number };
  /**
   * How the destination's circuit counts it (docs/circuits.md): the
   * destination answered, or failed. Absent: not at all (a transform
   * settled it, the dispatcher's stop aborted it).
   */
  circuit?: 'success' | 'failure';
}

/** What `settleCounting` did: how many outcomes were current, and the destination's circuit after them. */
export interface CircuitSettled {
  current: number;
  circuit: Circuit;
  /** Its changes, in order (opened, reopened, closed); none when it only counted. */
  changes: CircuitChange[];
}

export interface ForwardQuery {
  destination?: string;
  status?: ForwardStatus;
  source?: string;
  /** Only forwards with a smaller position (the list is newest first). */
  beforePosition?: number;
  limit: number;
}

/** Which failed forwards `retry` takes: by id, or by what they share. */
export type RetrySelection =
  { ids: readonly string[] } | { destination?: string; source?: string; since?: number; until?: number };

export interface DestinationState {
  name: string;
  paused: boolean;
  /** Forwards not yet settled (`pending` and `delivering`). */
  pending: number;
  failed: number;
  oldestPendingAt: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastError: string | null;
  /** Its circuit (docs/circuits.md); closed for a pull destination. */
  circuit: Circuit;
}

/** The outbox, as every backend implements it; `contract/outbox-contract.ts` holds them to it. */
export interface Outbox {
  /**
   * Turns expired leases of the destination into failed attempts, then
   * leases up to `max` due forwards to the caller, oldest due first (none
   * while the destination is paused).
   */
  claim(request: ClaimRequest): Promise<ClaimedForward[]>;
  /** Records attempts; answers how many were still current (the others changed nothing). */
  settle(outcomes: readonly AttemptOutcome[]): Promise<number>;
  /**
   * `settle`, for one destination's outcomes, counting those that name
   * `circuit` on its circuit, in their order, in the same transaction; the
   * circuit's row is written only when it changes.
   */
  settleCounting(destination: string, outcomes: readonly AttemptOutcome[], breaker: Breaker): Promise<CircuitSettled>;
  /** The destination's circuit as stored (closed when it never failed). */
  circuit(destination: string): Promise<Circuit>;
  /**
   * Takes the probe: an open circuit whose cooldown ended (or a half-open one
   * whose probe's window ended) becomes half open until `until`, for exactly
   * one caller; false for every other.
   */
  takeProbe(destination: string, now: number, until: number): Promise<boolean>;
  /** Forgets the destination's circuit (closed, never failed): its settings changed. Answers whether it was open or half open. */
  resetCircuit(destination: string): Promise<boolean>;
  /**
   * Hands claimed forwards back unattempted (a dispatcher that stops): pending
   * at `now`, their attempt number and budget as before the claim.
   */
  release(forwards: ReadonlyArray<{ id: string; n: number }>, now: number): Promise<void>;
  /**
   * Extends every push lease that `owner` holds (forwards `delivering`, claimed
   * with that owner) to `until`, in one statement (CONTRACT 6 "After a crash");
   * answers the ids of those it extended. One being settled or taken over at
   * that moment is left alone (it is not the owner's for long).
   */
  renewLeases(owner: string, until: number): Promise<string[]>;
  /**
   * A pull consumer's ack: `succeeded`, when `lease` is the forward's current
   * lease and has not run out at `now` (compared and set in one transaction).
   */
  ack(id: string, lease: string, now: number): Promise<LeaseAnswer>;
  /**
   * A pull consumer's nack, fenced as `ack`: its attempt failed; pending
   * again at `at`, or failed when the budget is spent.
   */
  nack(id: string, lease: string, now: number, at: number, budget: RetryBudget): Promise<LeaseAnswer>;
  get(id: string): Promise<Forward | undefined>;
  forwardsOf(deliveryId: string): Promise<Array<Forward & { attempts: Attempt[] }>>;
  list(query: ForwardQuery): Promise<ListedForward[]>;
  /** Failed forwards become pending with a fresh budget; answers how many. */
  retry(selection: RetrySelection, now: number): Promise<number>;
  /** False when there is no such forward; a settled one stays as it is. */
  cancel(id: string, now: number): Promise<boolean>;
  /** A new forward of a stored delivery (send it again); undefined when there is no such delivery. */
  create(deliveryId: string, forward: NewForward, now: number): Promise<Forward | undefined>;
  /** Every destination that has forwards or was paused, with its counts. */
  destinations(): Promise<DestinationState[]>;
  setPaused(destination: string, paused: boolean): Promise<void>;
  /** When the destination's next forward falls due or its earliest lease runs out (ms); undefined when nothing waits. */
  nextDueAt(destination: string, ordered?: boolean): Promise<number | undefined>;
  /**
   * Hears of each forward that goes to `failed` through this outbox (a
   * settle, an expired lease, a nack), once its transaction has committed;
   * answers the function that stops it.
   */
  onDeadLetters(listener: DeadLetterListener): () => void;
}
