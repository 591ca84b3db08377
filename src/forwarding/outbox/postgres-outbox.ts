import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { holdable } from '../../platform/db/postgres/text-values.js';
import type { ForwardSummary, NewForward } from '../../deliveries/delivery-store.js';
import { FORWARD_COLUMNS, forwardFromRow, type ForwardRow } from './forward-row.js';
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
import { claimForwards } from './postgres-claim.js';
import { finishLease, releaseForwards, renewOwnedLeases } from './postgres-lease.js';
import {
  destinationStates,
  forwardsOfDelivery,
  forwardSummaries,
  getForward,
  listForwards,
  nextDueTime,
} from './postgres-outbox-reads.js';
import { settleCounted, settleOutcomes } from './postgres-settle.js';
import { DeadLetterListeners, type DeadLetter, type DeadLetterListener } from './dead-letters.js';
import { closedCircuit, type Breaker, type Circuit } from '../circuit/circuit.js';
import { readCircuit, resetCircuit, takeProbe } from '../circuit/postgres-circuits.js';

/**
 * The outbox on PostgreSQL (see `Outbox`). Several instances claim from it at
 * once: `FOR UPDATE SKIP LOCKED` gives each forward to one of them, and the
 * lease fences a late outcome (an outcome counts only for the attempt that
 * is still current).
 */
export class PostgresOutbox implements Outbox {
  private readonly deadLetterListeners = new DeadLetterListeners();

  constructor(private readonly db: PostgresRunner) {}

  async claim(request: ClaimRequest): Promise<ClaimedForward[]> {
    const failed: DeadLetter[] = [];
    const claimed = await claimForwards(this.db, request, failed);
    this.deadLetterListeners.tell(failed);
    return claimed;
  }

  async settle(outcomes: readonly AttemptOutcome[]): Promise<number> {
    const failed: DeadLetter[] = [];
    const settled = await settleOutcomes(this.db, outcomes, failed);
    this.deadLetterListeners.tell(failed);
    return settled;
  }

  onDeadLetters(listener: DeadLetterListener): () => void {
    return this.deadLetterListeners.add(listener);
  }

  async settleCounting(destination: string, outcomes: readonly AttemptOutcome[], breaker: Breaker): Promise<CircuitSettled> {
    const failed: DeadLetter[] = [];
    const settled = await settleCounted(this.db, destination, outcomes, breaker, failed);
    this.deadLetterListeners.tell(failed);
    return settled;
  }

  circuit(destination: string): Promise<Circuit> {
    return holdable(destination) ? readCircuit(this.db, destination) : Promise.resolve(closedCircuit());
  }

  takeProbe(destination: string, now: number, until: number): Promise<boolean> {
    return takeProbe(this.db, destination, now, until);
  }

  resetCircuit(destination: string): Promise<boolean> {
    return holdable(destination) ? resetCircuit(this.db, destination) : Promise.resolve(false);
  }

  renewLeases(owner: string, until: number): Promise<string[]> {
    return renewOwnedLeases(this.db, owner, until);
  }

  release(forwards: ReadonlyArray<{ id: string; n: number }>, now: number): Promise<void> {
    return releaseForwards(this.db, forwards, now);
  }

  ack(id: string, lease: string, now: number): Promise<LeaseAnswer> {
    return finishLease(this.db, id, lease, now);
  }

  async nack(id: string, lease: string, now: number, at: number, budget: RetryBudget): Promise<LeaseAnswer> {
    const failed: DeadLetter[] = [];
    const answer = await finishLease(this.db, id, lease, now, { at, budget, failed });
    this.deadLetterListeners.tell(failed);
    return answer;
  }

  get(id: string): Promise<Forward | undefined> {
    return getForward(this.db, id);
  }

  forwardsOf(deliveryId: string): Promise<Array<Forward & { attempts: Attempt[] }>> {
    return forwardsOfDelivery(this.db, deliveryId);
  }

  /** The forwards of each delivery (by seq), for their JSON. */
  summariesOf(seqs: readonly number[]): Promise<Map<number, ForwardSummary[]>> {
    return forwardSummaries(this.db, seqs);
  }

  list(query: ForwardQuery): Promise<ListedForward[]> {
    return listForwards(this.db, query);
  }

  async retry(selection: RetrySelection, now: number): Promise<number> {
    if (
      'ids' in selection
        ? !selection.ids.every(holdable)
        : ![selection.destination, selection.source].every((value) => value === undefined || holdable(value))
    )
      return 0;
    const set = `UPDATE forwards SET status = 'pending', budget_used = 0, budget_started_at = $1, next_attempt_at = $1, lease = NULL,
      updated_at = $1 WHERE status = 'failed'`;
    const result =
      'ids' in selection
        ? await this.db.execute(`${set} AND id = ANY($2::text[])`, [now, selection.ids])
        : await this.db.execute(
            `${set} AND ($2::text IS NULL OR destination = $2) AND ($3::text IS NULL OR source = $3)
          AND ($4::bigint IS NULL OR created_at >= $4) AND ($5::bigint IS NULL OR created_at < $5)`,
            [now, selection.destination ?? null, selection.source ?? null, selection.since ?? null, selection.until ?? null],
          );
    return result.rowCount ?? 0;
  }

  async cancel(id: string, now: number): Promise<boolean> {
    if (!holdable(id)) return false;
    const result = await this.db.execute(
      `UPDATE forwards SET status = 'cancelled', next_attempt_at = NULL, lease_until = NULL, lease = NULL, attempt_started_at = NULL,
         updated_at = $1
       WHERE id = $2 AND status IN ('pending', 'delivering', 'failed')`,
      [now, id],
    );
    if ((result.rowCount ?? 0) > 0) return true;
    return (await this.get(id)) !== undefined;
  }

  async create(deliveryId: string, forward: NewForward, now: number): Promise<Forward | undefined> {
    if (!holdable(deliveryId)) return undefined;
    const row = (
      await this.db.execute<ForwardRow>(
        `INSERT INTO forwards (id, delivery_seq, delivery_id, source, destination, status, budget_started_at,
         next_attempt_at, created_at, updated_at, transform)
       SELECT $1, seq, id, source, $2, 'pending', $3, $3, $3, $3, $5 FROM deliveries WHERE id = $4
       RETURNING ${FORWARD_COLUMNS}`,
        [forward.id, forward.destination, now, deliveryId, forward.transform ?? null],
      )
    ).rows[0];
    return row === undefined ? undefined : forwardFromRow(row);
  }

  destinations(): Promise<DestinationState[]> {
    return destinationStates(this.db);
  }

  async setPaused(destination: string, paused: boolean): Promise<void> {
    await this.db.execute(
      'INSERT INTO destinations (name, paused) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET paused = excluded.paused',
      [destination, paused],
    );
  }

  nextDueAt(destination: string, ordered = false): Promise<number | undefined> {
    return nextDueTime(this.db, destination, ordered);
  }
}
