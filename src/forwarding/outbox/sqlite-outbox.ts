import type { Database } from '../../platform/db/sqlite/driver.js';
import { syncLevel, withoutSync } from '../../platform/db/sqlite/without-sync.js';
import { releaseInterrupted } from './sqlite-release-interrupted.js';
import { deliveryFromRow } from '../../deliveries/delivery-row.js';
import {
  attemptFromRow,
  budgetSpent,
  holdsLease,
  stateOf,
  forwardFromRow,
  LEASE_EXPIRED,
  newLease,
  withinBytes,
  responseColumn,
  listedForwardFromRow,
} from './forward-row.js';
import type {
  Attempt,
  AttemptOutcome,
  ClaimedForward,
  ClaimRequest,
  DestinationState,
  Forward,
  ForwardQuery,
  LeaseAnswer,
  ListedForward,
  Outbox,
  RetryBudget,
  RetrySelection,
  CircuitSettled,
} from './outbox.js';
import type { ForwardSummary, NewForward } from '../../deliveries/delivery-store.js';
import { outboxStatements, type OutboxStatements } from './sqlite-outbox-statements.js';
import { DeadLetterListeners, type DeadLetter, type DeadLetterListener } from './dead-letters.js';
import { SqliteCircuits } from '../circuit/sqlite-circuits.js';
import type { Breaker, Circuit } from '../circuit/circuit.js';
import { circuitEvents } from '../circuit/circuit-events.js';

/**
 * The outbox on SQLite (see `Outbox`). Every write is one synchronous
 * transaction on the inbox's connection, so that a claim cannot interleave
 * with another: one process owns the file's writes at a time.
 */
export class SqliteOutbox implements Outbox {
  private readonly q: OutboxStatements;
  private readonly deadLetterListeners = new DeadLetterListeners();
  /** The forwards the transaction under way failed: told once it commits (transactions here are synchronous, one at a time). */
  private deadLetters: DeadLetter[] = [];
  private readonly circuits: SqliteCircuits;

  constructor(private readonly db: Database) {
    this.q = outboxStatements(db);
    this.circuits = new SqliteCircuits(db);
    this.claimTransaction = db.transaction((request: ClaimRequest) => this.claimAll(request));
    this.settleTransaction = db.transaction((outcomes: readonly AttemptOutcome[]) => this.settleAll(outcomes));
    this.countingTransaction = db.transaction(
      (destination: string, outcomes: readonly AttemptOutcome[], breaker: Breaker): CircuitSettled => {
        const current = this.settleAll(outcomes);
        return { current, ...this.circuits.count(destination, circuitEvents(outcomes), breaker) };
      },
    );
    this.ackTransaction = db.transaction((id: string, lease: string, now: number, nack?: { at: number; budget: RetryBudget }) =>
      this.finish(id, lease, now, nack),
    );
    this.releaseTransaction = db.transaction((forwards: ReadonlyArray<{ id: string; n: number }>, now: number) => {
      for (const { id, n } of forwards) this.q.release.run({ now, id, n });
    });
    this.durableSync = syncLevel(db);
  }

  /** The connection's `synchronous` level for everything else (FULL with the default durability). */
  private readonly durableSync: number;

  /**
   * Claims and outcomes commit without waiting for the disk (`synchronous =
   * NORMAL` for their transaction only): losing one to a power cut only
   * repeats an attempt, which at-least-once allows (a claim lost leaves the
   * forward pending; an outcome lost leaves it to its lease). The next
   * durable commit syncs the WAL, these frames included. Deliveries, and
   * what a person does (retry, cancel, pause), keep the store's durability.
   * Measured: a drain of 20,000 forwards went from one fsync per claim and
   * per settle to none (see bench/RESULTS.md).
   */
  private withoutSync<T>(work: () => T): T {
    return withoutSync(this.db, this.durableSync, work);
  }

  /**
   * Inside the append transaction: the forwards of a delivery just inserted.
   * Answers those stored leased (`NewForward.lease`; not when the
   * destination is paused: those wait `pending`), with their position.
   */
  insertForwards(
    deliverySeq: number | bigint,
    deliveryId: string,
    source: string,
    forwards: readonly NewForward[],
    now: number,
  ): Array<{ id: string; position: number }> | undefined {
    let leased: Array<{ id: string; position: number }> | undefined;
    for (const forward of forwards) {
      const lease = forward.lease;
      if (lease !== undefined && this.q.paused.get(forward.destination)?.paused !== 1) {
        const { lastInsertRowid } = this.q.insertLeased.run({
          id: forward.id,
          seq: deliverySeq,
          deliveryId,
          source,
          destination: forward.destination,
          now,
          startedAt: lease.startedAt,
          until: lease.until,
          lease: lease.token,
          owner: lease.owner,
          transform: forward.transform ?? null,
        });
        (leased ??= []).push({ id: forward.id, position: Number(lastInsertRowid) });
        continue;
      }
      this.q.insert.run(
        forward.id,
        deliverySeq,
        deliveryId,
        source,
        forward.destination,
        now,
        now,
        now,
        now,
        forward.transform ?? null,
      );
    }
    return leased;
  }

  private claimAll(request: ClaimRequest): ClaimedForward[] {
    const { destination, now } = request;
    for (const row of this.q.expired.all(destination, now)) {
      const forward = forwardFromRow(row);
      const startedAt = row.attempt_started_at ?? now;
      this.q.attempt.run({
        id: forward.id,
        n: forward.attemptCount,
        startedAt,
        durationMs: Math.max(0, now - startedAt),
        status: null,
        error: LEASE_EXPIRED,
        response: null,
        transformName: null,
        transformVersion: null,
      });
      const failed = budgetSpent(forward, request.budget, now);
      if (failed) this.deadLetters.push({ destination, error: LEASE_EXPIRED });
      this.q.settle.run(
        failed ? 'failed' : 'pending',
        failed ? null : now,
        null,
        LEASE_EXPIRED,
        now,
        forward.id,
        forward.attemptCount,
      );
      this.q.failedAt.run(destination, now, LEASE_EXPIRED);
    }
    if (request.max <= 0 || this.q.paused.get(destination)?.paused === 1) return [];
    // Nothing while its circuit is open or half open (docs/circuits.md), but for the probe.
    if (request.probe !== true && this.circuits.read(destination).state !== 'closed') return [];
    const due = withinBytes(
      (request.ordered ? this.q.dueHeads : this.q.due).all(destination, now, request.max),
      request.maxBytes,
    );
    if (due.length === 0) return [];
    const leaseUntil = now + request.leaseMs;
    const taken: Forward[] = [];
    for (const { position } of due) {
      const row = this.q.take.get(now, leaseUntil, leaseUntil, now, newLease(), request.owner ?? null, position);
      if (row !== undefined) taken.push(forwardFromRow(row));
    }
    const seqs = taken.map((f) => f.deliverySeq);
    const summaries = this.summariesOf(seqs);
    const deliveries = new Map(
      this.q.deliveriesBySeq.all(JSON.stringify(seqs)).map((row) => {
        const delivery = deliveryFromRow(row);
        delivery.forwards = summaries.get(delivery.seq) ?? [];
        return [delivery.seq, delivery];
      }),
    );
    const claimed: ClaimedForward[] = [];
    for (const forward of taken.sort((a, b) => a.position - b.position)) {
      const delivery = deliveries.get(forward.deliverySeq);
      if (delivery !== undefined) claimed.push({ forward, delivery });
    }
    return claimed;
  }

  private readonly claimTransaction;

  async claim(request: ClaimRequest): Promise<ClaimedForward[]> {
    // Nothing due and no lease run out (most wake-ups, once forwards are leased at their commit): no transaction.
    if (this.q.anyDue.get(request.destination, request.now) === undefined) return [];
    return this.telling(() => this.withoutSync(() => this.claimTransaction.immediate(request)));
  }

  onDeadLetters(listener: DeadLetterListener): () => void {
    return this.deadLetterListeners.add(listener);
  }

  /** Runs a transaction, then tells the forwards it failed (none when it threw: it rolled back). */
  private telling<T>(transaction: () => T): T {
    this.deadLetters = [];
    try {
      const result = transaction();
      this.deadLetterListeners.tell(this.deadLetters);
      return result;
    } finally {
      this.deadLetters = [];
    }
  }

  private readonly settleTransaction;

  private settleAll(outcomes: readonly AttemptOutcome[]): number {
    let current = 0;
    const succeeded = new Map<string, number>();
    const failed = new Map<string, { at: number; error: string | null }>();
    for (const o of outcomes) {
      this.q.attempt.run({
        id: o.forwardId,
        n: o.n,
        startedAt: o.startedAt,
        durationMs: o.durationMs,
        status: o.status,
        error: o.error,
        response: responseColumn(o.response),
        transformName: o.transform?.name ?? null,
        transformVersion: o.transform?.version ?? null,
      });
      const { next } = o;
      const status = next.state;
      const nextAt = next.state === 'pending' ? next.at : null;
      const changed = this.q.settle.run(status, nextAt, o.status, o.error, o.startedAt + o.durationMs, o.forwardId, o.n).changes;
      current += changed;
      if (changed === 0) continue;
      const at = o.startedAt + o.durationMs;
      if (status === 'succeeded') succeeded.set(o.destination, Math.max(at, succeeded.get(o.destination) ?? 0));
      // A forward its transform dropped (CONTRACT 10) neither succeeded nor failed.
      else if (status === 'cancelled') continue;
      else if ((failed.get(o.destination)?.at ?? 0) <= at) failed.set(o.destination, { at, error: o.error });
      if (status === 'failed') this.deadLetters.push({ destination: o.destination, error: o.error });
    }
    for (const [name, at] of succeeded) this.q.succeededAt.run(name, at);
    for (const [name, { at, error }] of failed) this.q.failedAt.run(name, at, error);
    return current;
  }

  async settle(outcomes: readonly AttemptOutcome[]): Promise<number> {
    return outcomes.length === 0 ? 0 : this.telling(() => this.withoutSync(() => this.settleTransaction.immediate(outcomes)));
  }

  private readonly countingTransaction;

  async settleCounting(destination: string, outcomes: readonly AttemptOutcome[], breaker: Breaker): Promise<CircuitSettled> {
    return this.telling(() => this.withoutSync(() => this.countingTransaction.immediate(destination, outcomes, breaker)));
  }

  async circuit(destination: string): Promise<Circuit> {
    return this.circuits.read(destination);
  }

  async resetCircuit(destination: string): Promise<boolean> {
    return this.circuits.reset(destination);
  }

  async takeProbe(destination: string, now: number, until: number): Promise<boolean> {
    return this.withoutSync(() => this.circuits.takeProbe(destination, now, until));
  }

  private readonly ackTransaction;
  private readonly releaseTransaction;

  /** Ack (no `nack`) or nack, fenced: only the forward's current lease, before it runs out, settles it. */
  private finish(id: string, lease: string, now: number, nack?: { at: number; budget: RetryBudget }): LeaseAnswer {
    const row = this.q.get.get(id);
    if (row === undefined) return 'not_found';
    const forward = forwardFromRow(row);
    if (!holdsLease(forward, lease, now)) return 'lease_lost';
    const startedAt = row.attempt_started_at ?? now;
    this.q.attempt.run({
      id,
      n: forward.attemptCount,
      startedAt,
      durationMs: Math.max(0, now - startedAt),
      status: null,
      error: nack === undefined ? null : 'nack',
      response: null,
      transformName: null,
      transformVersion: null,
    });
    if (nack === undefined) {
      this.q.succeed.run(now, id, lease);
      this.q.succeededAt.run(forward.destination, now);
    } else {
      const failed = budgetSpent(forward, nack.budget, now);
      if (failed) this.deadLetters.push({ destination: forward.destination, error: 'nack' });
      this.q.settle.run(failed ? 'failed' : 'pending', failed ? null : nack.at, null, 'nack', now, id, forward.attemptCount);
      this.q.failedAt.run(forward.destination, now, 'nack');
    }
    return 'ok';
  }

  async release(forwards: ReadonlyArray<{ id: string; n: number }>, now: number): Promise<void> {
    if (forwards.length > 0) this.withoutSync(() => this.releaseTransaction.immediate(forwards, now));
  }

  async renewLeases(owner: string, until: number): Promise<string[]> {
    return this.withoutSync(() => this.q.renew.all(until, until, owner).map((row) => row.id));
  }

  /**
   * At start, before forwarding does (CONTRACT 6 "After a crash"): one
   * process owns the file, so every forward still `delivering` was caught by
   * the end of the last one. Its attempt is recorded as interrupted; the
   * forward is pending at once, or failed when that spent its budget (told
   * to `onDeadLetters` as every other dead letter).
   */
  releaseInterrupted(now: number, budgetOf: (destination: string) => RetryBudget): number {
    return this.telling(() => releaseInterrupted(this.db, now, budgetOf, this.deadLetters));
  }

  async ack(id: string, lease: string, now: number): Promise<LeaseAnswer> {
    return this.withoutSync(() => this.ackTransaction.immediate(id, lease, now));
  }

  async nack(id: string, lease: string, now: number, at: number, budget: RetryBudget): Promise<LeaseAnswer> {
    return this.telling(() => this.withoutSync(() => this.ackTransaction.immediate(id, lease, now, { at, budget })));
  }

  async get(id: string): Promise<Forward | undefined> {
    const row = this.q.get.get(id);
    return row === undefined ? undefined : forwardFromRow(row);
  }

  async forwardsOf(deliveryId: string): Promise<Array<Forward & { attempts: Attempt[] }>> {
    const forwards = this.q.ofDelivery.all(deliveryId).map(forwardFromRow);
    const attempts = new Map<string, Attempt[]>();
    for (const row of this.q.attemptsOf.all(JSON.stringify(forwards.map((f) => f.id)))) {
      const list = attempts.get(row.forward_id) ?? [];
      list.push(attemptFromRow(row));
      attempts.set(row.forward_id, list);
    }
    return forwards.map((forward) => ({ ...forward, attempts: attempts.get(forward.id) ?? [] }));
  }

  /** The forwards of each delivery (by seq), for their JSON. */
  summariesOf(seqs: readonly number[]): Map<number, ForwardSummary[]> {
    const bySeq = new Map<number, ForwardSummary[]>();
    if (seqs.length === 0) return bySeq;
    for (const row of this.q.summaries.all(JSON.stringify(seqs))) {
      const list = bySeq.get(row.delivery_seq) ?? [];
      list.push({ destination: row.destination, status: row.status });
      bySeq.set(row.delivery_seq, list);
    }
    return bySeq;
  }

  async list(query: ForwardQuery): Promise<ListedForward[]> {
    return this.q.list
      .all({
        before: query.beforePosition ?? Number.MAX_SAFE_INTEGER,
        destination: query.destination ?? null,
        status: query.status ?? null,
        source: query.source ?? null,
        limit: query.limit,
      })
      .map(listedForwardFromRow);
  }

  async retry(selection: RetrySelection, now: number): Promise<number> {
    if ('ids' in selection) return this.q.retryIds.run({ now, ids: JSON.stringify(selection.ids) }).changes;
    return this.q.retryWhere.run({
      now,
      destination: selection.destination ?? null,
      source: selection.source ?? null,
      since: selection.since ?? null,
      until: selection.until ?? null,
    }).changes;
  }

  async cancel(id: string, now: number): Promise<boolean> {
    if (this.q.cancel.run(now, id).changes > 0) return true;
    return this.q.get.get(id) !== undefined;
  }

  async create(deliveryId: string, forward: NewForward, now: number): Promise<Forward | undefined> {
    const row = this.q.create.get(forward.id, forward.destination, now, now, now, now, forward.transform ?? null, deliveryId);
    return row === undefined ? undefined : forwardFromRow(row);
  }

  async destinations(): Promise<DestinationState[]> {
    const states = new Map<string, DestinationState>();
    const state = (name: string): DestinationState => stateOf(states, name);
    for (const row of this.q.counts.all()) {
      const s = state(row.destination);
      if (row.status === 'failed') s.failed += row.count;
      else {
        s.pending += row.count;
        s.oldestPendingAt = Math.min(row.oldest, s.oldestPendingAt ?? row.oldest);
      }
    }
    for (const row of this.q.destinationRows.all()) {
      const s = state(row.name);
      s.paused = row.paused !== 0;
      s.lastSuccessAt = row.last_success_at;
      s.lastFailureAt = row.last_failure_at;
      s.lastError = row.last_error;
    }
    for (const [name, circuit] of this.circuits.all()) state(name).circuit = circuit;
    return [...states.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async setPaused(destination: string, paused: boolean): Promise<void> {
    this.q.pause.run(destination, paused ? 1 : 0);
  }

  async nextDueAt(destination: string, ordered = false): Promise<number | undefined> {
    const at = (ordered ? this.q.nextDueHead : this.q.nextDue).get(destination)?.at;
    return at === null || at === undefined ? undefined : at;
  }
}
