import type { Logger } from '../platform/observe/logger.js';
import type { ForwardMetrics } from './forward-metrics.js';
import type { AttemptOutcome, ClaimedForward, Outbox } from './outbox/outbox.js';
import { budgetOf, type Destination } from './destination.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { Publisher, PublishResult } from './publishers/publisher.js';
import { TokenBucket } from './token-bucket.js';
import type { Transforms } from '../transforms/transforms.js';
import { transformAttempt } from './transform-attempt.js';
import { attemptVerdict } from './attempt-verdict.js';
import type { AttemptTransform } from './outbox/outbox.js';
import type { IssueSignals } from '../issues/issue-signals.js';
import { CircuitWatch } from './circuit/circuit-watch.js';
import { Throttle } from './circuit/throttle.js';

export interface DispatcherDeps {
  outbox: Outbox;
  publisher: Publisher;
  metrics: ForwardMetrics;
  logger: Logger;
  /** This instance's push leases: the owner its claims name, renewed while it lives. */
  leases: LeaseKeeper;
  /** The transforms in force (a reload swaps them): a forward's transform runs at each attempt (CONTRACT 10). */
  transforms?: Transforms;
  /** Told of each transform that cannot run (CONTRACT 11 `transform_failing`) and when the destination's circuit opens and closes (`destination_down`); nowhere when absent. */
  issues?: IssueSignals;
}

/** Longest sleep between claims when nothing wakes the dispatcher: lease take-overs and other instances' forwards are found within it. */
export const POLL_MS = 1000;
/** Sleep when forwards are due but none could be claimed (an ordered head in flight, another instance's locks). */
const BLOCKED_MS = 50;
/** Forwards claimed per transaction, at most. */
const MAX_CLAIM = 100;
/**
 * Delivery bodies claimed per transaction, at most (always one forward): a
 * claim of 100 forwards of 5 MiB bodies would hold 500 MiB in memory, waiting
 * for their turn.
 */
const MAX_CLAIM_BYTES = 32 * 1024 * 1024;
/** How long outcomes are gathered before they are recorded together. */
const SETTLE_GATHER_MS = 5;

/**
 * Sends one push destination's forwards: claims due ones from the outbox
 * (leased, so that several instances share the work), keeps up to
 * `concurrency` attempts in flight, and records their outcomes in group
 * commits. It runs beside receiving on the same event loop: it waits only
 * on its own destination and its own store calls.
 */
export class PushDispatcher {
  private inflight = 0;
  private stopped = false;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private outcomes: AttemptOutcome[] = [];
  private settling: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly bucket: TokenBucket | undefined;
  private running: Promise<void> | undefined;
  private idle: Array<() => void> = [];
  /** Claimed forwards waiting for room (leased to this instance), with when their claim had committed. */
  private queue: Array<ClaimedForward & { claimedAt: number }> = [];
  private pumpTimer: NodeJS.Timeout | undefined;
  /** The destination's stored circuit, as this instance last saw it (docs/circuits.md). */
  readonly circuit: CircuitWatch;
  /** The slow-down after a 429 or 503 (per process). */
  private readonly throttle: Throttle;
  /** The probe this instance sends while the circuit is half open, until its attempt ends. */
  private probe: string | undefined;
  /**
   * Failed attempts in a row as this instance counts them before the store
   * does: once they reach `breaker.failures`, no attempt starts until the
   * outcomes are recorded (and the circuit, likely open, is known), so that
   * nothing is sent after the failure that opens it.
   */
  private failuresInARow = 0;
  /** A flush is recording outcomes now. */
  private recording = false;
  /** Slots held for forwards being leased in a commit under way (see `acceptsAtCommit`). */
  private atCommit = 0;

  constructor(
    readonly destination: Destination,
    private readonly deps: DispatcherDeps,
  ) {
    const rate = destination.rateLimit;
    this.bucket = rate === undefined ? undefined : new TokenBucket(rate.requests, rate.perSeconds);
    this.throttle = new Throttle(rate === undefined ? undefined : rate.requests / rate.perSeconds);
    this.circuit = new CircuitWatch(
      destination.name,
      {
        outbox: deps.outbox,
        logger: deps.logger,
        metrics: deps.metrics,
        ...(deps.issues === undefined ? {} : { issues: deps.issues }),
      },
      POLL_MS,
    );
  }

  /** Starts sending; `resetCircuit`: first forgets the destination's circuit (its settings changed, docs/circuits.md). */
  start(resetCircuit = false): void {
    this.running ??= (resetCircuit ? this.circuit.reset() : Promise.resolve())
      .then(() => this.loop())
      .catch((error: unknown) => {
        this.deps.logger.error({ destination: this.destination.name, err: error }, 'forwarding stopped on an unexpected error');
      });
  }

  /** New forwards may be due (a commit, a resume, a retry): claim now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    const wake = this.wakeUp;
    this.wakeUp = undefined;
    wake?.();
  }

  /**
   * Whether a forward committed now may be leased to this instance in its
   * commit and handed here at once (lease-at-commit.ts): a free slot with
   * nothing queued for it (and a rate token), not ordered (its head is the
   * store's to find), not stopping. Else it is stored `pending` and claimed.
   */
  acceptsAtCommit(): boolean {
    if (this.stopped || this.running === undefined || this.destination.ordered) return false;
    // A circuit that is not closed (docs/circuits.md), failures being recorded that may open it, or a
    // slow-down after a 429/503: the forward waits `pending` and is claimed when the dispatcher may send.
    if (this.circuit.blocks() || this.awaitingCircuit() || this.throttle.current() !== undefined) return false;
    const held = this.inflight + this.queue.length + this.atCommit;
    if (this.bucket !== undefined && this.bucket.available() <= this.queue.length + this.atCommit) return false;
    return held < this.destination.concurrency;
  }

  /** A slot held for a forward being leased in a commit under way (`acceptsAtCommit` counts it). */
  reserveAtCommit(): void {
    this.atCommit++;
  }

  /**
   * The slot's forward, once its commit is over: leased to this instance
   * (committed at `claimedAt`), it is sent at once; undefined when the commit
   * failed or stored it `pending`. Handed back if this dispatcher stopped meanwhile.
   */
  takeAtCommit(claimed: ClaimedForward | undefined, claimedAt: number): void {
    this.atCommit--;
    if (claimed === undefined) return;
    if (this.stopped) void this.release([claimed]);
    else {
      this.queue.push({ ...claimed, claimedAt });
      this.pump();
    }
  }

  /**
   * Stops claiming; lets the attempts in flight finish for up to `graceMs`,
   * then aborts the rest (each is recorded as a failed attempt, to be
   * retried), records every outcome and closes the connections.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pumpTimer);
    this.wake();
    await this.running;
    if (this.inflight > 0) {
      const grace = setTimeout(() => this.abort.abort(), graceMs);
      await new Promise<void>((resolve) => this.idle.push(resolve));
      clearTimeout(grace);
    }
    // A flush already under way finishes first; then the last outcomes are recorded.
    await this.settling;
    await this.flush();
    await this.deps.publisher.close();
  }

  private async loop(): Promise<void> {
    const { outbox, logger } = this.deps;
    const { destination } = this;
    while (!this.stopped) {
      this.woken = false;
      await this.circuit.refresh(Date.now());
      if (this.circuit.blocks()) {
        await this.whileBlocked();
        continue;
      }
      const want = this.wanted();
      let claimed: ClaimedForward[] = [];
      if (want > 0) {
        try {
          claimed = await outbox.claim({
            destination: destination.name,
            max: want,
            leaseMs: this.deps.leases.leaseMs,
            now: Date.now(),
            ordered: destination.ordered,
            budget: budgetOf(destination),
            owner: this.deps.leases.owner,
            maxBytes: MAX_CLAIM_BYTES,
          });
        } catch (error) {
          logger.warn(
            { destination: destination.name, problem: describe(error) },
            'forwarding: the outbox cannot be read; trying again in a second',
          );
          await this.sleep(POLL_MS);
          continue;
        }
      }
      const claimedAt = Date.now();
      this.queue.push(...claimed.map((c) => ({ ...c, claimedAt })));
      if (this.stopped) break;
      this.pump();
      // A full claim means more may be due at once: claim again when there is room.
      if (claimed.length > 0 && claimed.length === want && this.wanted() > 0) continue;
      await this.sleep(await this.waitMs(want, claimed.length));
    }
    // Claimed but never sent: handed back as they were, their attempt not spent.
    await this.release(this.queue.splice(0));
  }

  /**
   * The circuit is open or half open: what was claimed is handed back (its
   * attempt not spent); once the cooldown ends, and nothing of this
   * destination is in flight here, one forward is claimed and the probe
   * taken for it (one instance wins; the others hand theirs back).
   */
  private async whileBlocked(): Promise<void> {
    await this.release(this.queue.splice(0));
    const now = Date.now();
    if (this.probe === undefined && this.inflight === 0 && this.circuit.probeDue(now)) {
      if (await this.sendProbe(now)) return;
      await this.circuit.refresh(Date.now(), true);
    }
    await this.sleep(this.circuit.waitMs(Date.now()));
  }

  private async sendProbe(now: number): Promise<boolean> {
    const { destination } = this;
    let claimed: ClaimedForward[];
    try {
      claimed = await this.deps.outbox.claim({
        destination: destination.name,
        max: 1,
        leaseMs: this.deps.leases.leaseMs,
        now,
        ordered: destination.ordered,
        budget: budgetOf(destination),
        owner: this.deps.leases.owner,
        maxBytes: MAX_CLAIM_BYTES,
        probe: true,
      });
    } catch {
      return false;
    }
    const first = claimed[0];
    if (first === undefined) return false;
    // The probe's window: its attempt, and some, before another instance may probe instead.
    const until = Date.now() + destination.timeoutMs + this.deps.leases.leaseMs;
    const taken = await this.deps.outbox.takeProbe(destination.name, Date.now(), until).catch(() => false);
    if (!taken || this.stopped) {
      await this.release(claimed);
      return false;
    }
    this.circuit.probing(Date.now(), until);
    this.probe = first.forward.id;
    this.deps.logger.info(
      { destination: destination.name, forwardId: first.forward.id },
      'circuit half open: one forward is tried',
    );
    this.throttle.started();
    this.send(first);
    return true;
  }

  /**
   * How many forwards to claim now: none while the queue of claimed ones is
   * more than half full; else enough to fill it. A claim takes more than
   * `concurrency` ahead, so that a fast destination costs one claim
   * transaction per batch rather than per attempt (a claimed forward waits
   * here, its lease renewed). With a rate limit, no more than its tokens.
   */
  private wanted(): number {
    const { concurrency } = this.destination;
    const held = this.queue.length + this.inflight;
    const slowed = this.throttle.current();
    if (slowed !== undefined) return Math.max(0, Math.min(concurrency - held, Math.ceil(slowed) - this.queue.length));
    if (this.bucket !== undefined) return Math.max(0, Math.min(concurrency - held, this.bucket.available() - this.queue.length));
    const target = concurrency + Math.min(MAX_CLAIM, Math.max(50, concurrency * 2));
    return held > concurrency + (target - concurrency) / 2 ? 0 : Math.min(MAX_CLAIM, target - held);
  }

  /** Starts attempts from the queue while there is room (and a rate token). */
  private pump(): void {
    while (
      this.inflight < this.destination.concurrency &&
      this.queue.length > 0 &&
      !this.stopped &&
      !this.circuit.blocks() &&
      !this.awaitingCircuit()
    ) {
      if (this.bucket !== undefined || this.throttle.current() !== undefined) {
        const wait = Math.max(this.bucket?.msUntilNext() ?? 0, this.throttle.msUntilNext());
        if (wait > 0) {
          this.pumpTimer ??= setTimeout(() => {
            this.pumpTimer = undefined;
            this.pump();
          }, wait);
          return;
        }
        this.bucket?.take(1);
      }
      const next = this.queue.shift();
      if (next === undefined) break;
      this.throttle.started();
      // Its lease is no longer certain (renewals have been failing nearly as long as a
      // lease lasts): handed back rather than sent, so that it is never knowingly sent twice.
      if (!this.deps.leases.mayStart(next.forward.id, next.claimedAt, next.forward.leaseUntil ?? 0)) void this.release([next]);
      else this.send(next);
    }
  }

  private async release(claimed: readonly ClaimedForward[]): Promise<void> {
    if (claimed.length === 0) return;
    try {
      await this.deps.outbox.release(
        claimed.map(({ forward }) => ({ id: forward.id, n: forward.attemptCount })),
        Date.now(),
      );
    } catch (error) {
      this.deps.logger.warn(
        { destination: this.destination.name, forwards: claimed.length, problem: describe(error) },
        'forwarding: claimed forwards could not be handed back; their leases will run out',
      );
    }
  }

  /** How long to sleep when there is nothing more to claim now. */
  private async waitMs(want: number, claimed: number): Promise<number> {
    if (want <= 0 || this.queue.length > 0) return POLL_MS;
    if (claimed > 0) return BLOCKED_MS;
    try {
      const due = await this.deps.outbox.nextDueAt(this.destination.name, this.destination.ordered);
      if (due === undefined) return POLL_MS;
      return Math.min(POLL_MS, Math.max(BLOCKED_MS, due - Date.now()));
    } catch {
      return POLL_MS;
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.wakeUp = resolve;
      this.timer = setTimeout(() => this.wake(), ms);
    }).then(() => clearTimeout(this.timer));
  }

  private send(claimed: ClaimedForward): void {
    this.inflight++;
    const startedAt = Date.now();
    this.attempt(claimed, startedAt)
      .catch((error: unknown) => this.record(claimed, startedAt, { ok: false, status: null, error: describe(error) }, null))
      .finally(() => {
        this.inflight--;
        if (this.probe === claimed.forward.id) this.probe = undefined;
        if (this.inflight === 0 && (this.stopped || this.queue.length === 0))
          for (const resolve of this.idle.splice(0)) resolve();
        this.pump();
        if (this.wanted() > 0) this.wake();
      });
  }

  /**
   * One attempt: the forward's transform first, when its route has one
   * (CONTRACT 10: dropped, it is cancelled; failing, it fails at once; both
   * without sending), then the publisher.
   */
  private async attempt(claimed: ClaimedForward, startedAt: number): Promise<void> {
    const step = await transformAttempt(claimed, this.deps.transforms, this.deps.issues);
    if ('aborted' in step) {
      this.record(claimed, startedAt, { ok: false, status: null, error: step.aborted }, null);
      return;
    }
    if ('settle' in step) {
      this.record(claimed, startedAt, { ok: false, status: null, error: step.error }, step.transform, step.settle);
      return;
    }
    const result = await this.deps.publisher
      .publish(step.send, this.abort.signal)
      .catch((error: unknown): PublishResult => ({ ok: false, status: null, error: describe(error) }));
    this.record(claimed, startedAt, result, step.transform);
  }

  private record(
    claimed: ClaimedForward,
    startedAt: number,
    result: PublishResult,
    transform: AttemptTransform | null,
    settled?: 'cancelled' | 'failed',
  ): void {
    const { destination } = this;
    const { forward } = claimed;
    const now = Date.now();
    const durationMs = Math.max(0, now - startedAt);
    const { next, outcome, line, level, message } = attemptVerdict(
      destination,
      claimed,
      result,
      transform,
      { now, durationMs },
      settled,
    );
    // What the circuit counts (docs/circuits.md): the destination's answer, not a transform's verdict nor our own stop.
    const circuit =
      settled !== undefined || this.abort.signal.aborted ? undefined : result.ok ? ('success' as const) : ('failure' as const);
    if (circuit !== undefined) this.slowDown(result, startedAt, now);
    this.deps.metrics.recordAttempt(destination.name, outcome, durationMs / 1000);
    this.deps.logger[level](line, message);
    if (circuit !== undefined) this.failuresInARow = circuit === 'success' ? 0 : this.failuresInARow + 1;
    this.outcomes.push({
      forwardId: forward.id,
      destination: destination.name,
      n: forward.attemptCount,
      startedAt,
      durationMs,
      status: result.status,
      error: result.error,
      response: result.response ?? null,
      transform,
      next,
      ...(circuit === undefined ? {} : { circuit }),
    });
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.settling !== undefined) return;
    // Outcomes are gathered for a few ms (one turn for an ordered destination,
    // whose next forward waits for this one's record) and recorded together.
    const gathered = this.destination.ordered
      ? new Promise<void>((resolve) => setImmediate(resolve))
      : new Promise<void>((resolve) => setTimeout(resolve, SETTLE_GATHER_MS));
    this.settling = gathered
      .then(() => this.flush())
      .finally(() => {
        this.settling = undefined;
        if (this.outcomes.length > 0) this.scheduleFlush();
      });
  }

  /** Records the outcomes gathered so far in one transaction; a store that fails leaves them to the leases. */
  private async flush(): Promise<void> {
    const batch = this.outcomes;
    this.outcomes = [];
    if (batch.length === 0) return;
    this.recording = true;
    try {
      const settled = await this.deps.outbox.settleCounting(this.destination.name, batch, this.destination.breaker);
      this.circuit.settled(settled);
      this.failuresInARow = settled.circuit.consecutiveFailures;
      // Outcomes gathered meanwhile count on top: the failures after the last success among them.
      for (const o of this.outcomes)
        if (o.circuit !== undefined) this.failuresInARow = o.circuit === 'success' ? 0 : this.failuresInARow + 1;
    } catch (error) {
      this.deps.logger.error(
        { destination: this.destination.name, outcomes: batch.length, problem: describe(error) },
        'forwarding: outcomes could not be recorded; their leases will run out and they will be attempted again',
      );
    }
    this.recording = false;
    this.pump();
    this.wake();
  }

  /** Failures enough to open the circuit are not yet recorded: no attempt starts until they are (and the circuit is known). */
  private awaitingCircuit(): boolean {
    return this.failuresInARow >= this.destination.breaker.failures && (this.recording || this.outcomes.length > 0);
  }

  /** A 429 or 503 halves the destination's rate; successes grow it back (docs/circuits.md). */
  private slowDown(result: PublishResult, startedAt: number, now: number): void {
    const changed =
      result.status === 429 || result.status === 503
        ? this.throttle.throttled(startedAt, now)
        : result.ok && this.throttle.succeeded(now);
    if (!changed) return;
    const rate = this.throttle.current();
    this.deps.metrics.sendRate(this.destination.name, rate);
    if (result.ok) return;
    this.deps.logger.warn(
      { destination: this.destination.name, status: result.status, requestsPerSecond: rate },
      'destination asks to slow down: its send rate is halved',
    );
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
