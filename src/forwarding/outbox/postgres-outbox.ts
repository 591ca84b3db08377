import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { DELIVERY_COLUMNS, deliveryFromRow, type DeliveryRow } from '../../deliveries/delivery-row.js';
import { holdable } from '../../platform/db/postgres/text-values.js';
import { settleOutcomes } from './postgres-settle.js';
import {
  ATTEMPT_COLUMNS,
  attemptFromRow,
  budgetSpent,
  FORWARD_COLUMNS,
  holdsLease,
  stateOf,
  forwardFromRow,
  LEASE_EXPIRED,
  newLease,
  withinBytes,
  type AttemptRow,
  type ForwardRow,
  LAST_ATTEMPT_COLUMN,
  listedForwardFromRow,
  type ListedForwardRow,
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
} from './outbox.js';
import type { ForwardSummary, NewForward } from '../../deliveries/delivery-store.js';

const UNSETTLED = "('pending', 'delivering')";

/** The size of a forward's delivery body: octet_length() of a TOASTed value reads its length, not the value. */
const SIZE = '(SELECT octet_length(raw) FROM deliveries d WHERE d.seq = forwards.delivery_seq) AS size';

/**
 * The head of each source of a destination (ordered claims): the forward it
 * has delivering, if any, else its oldest unsettled one by seq. A failed
 * forward retried, or an older delivery sent again, is older than the one
 * delivering but waits for it: one at a time per source.
 */
const HEADS = `SELECT DISTINCT ON (source) position, next_attempt_at FROM forwards
  WHERE destination = $1 AND status IN ${UNSETTLED} ORDER BY source, status = 'delivering' DESC, delivery_seq, position`;

/**
 * Records attempt n of a forward that still exists and has taken it: an
 * outcome may come back after its delivery was deleted (the foreign key
 * would fail the whole settle). The row lock keeps a delete from slipping in
 * between; an attempt already recorded stays.
 */
const INSERT_ATTEMPT = `INSERT INTO forward_attempts (forward_id, n, started_at, duration_ms, status, error)
  SELECT id, $2::integer, $3::bigint, $4::integer, $5::integer, $6::text FROM forwards
  WHERE id = $1 AND attempt_count >= $2::integer FOR KEY SHARE
  ON CONFLICT DO NOTHING`;
const SETTLE = `UPDATE forwards SET status = $1, next_attempt_at = $2, lease_until = NULL, lease = NULL, attempt_started_at = NULL,
    last_status = $3, last_error = $4, updated_at = $5
  WHERE id = $6 AND status = 'delivering' AND attempt_count = $7`;
const SUCCEEDED_AT = `INSERT INTO destinations (name, last_success_at) VALUES ($1, $2)
  ON CONFLICT (name) DO UPDATE SET last_success_at = greatest(destinations.last_success_at, excluded.last_success_at)`;
const FAILED_AT = `INSERT INTO destinations (name, last_failure_at, last_error) VALUES ($1, $2, $3)
  ON CONFLICT (name) DO UPDATE SET last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
  WHERE coalesce(destinations.last_failure_at, 0) <= excluded.last_failure_at`;

/**
 * Taken (with a hash of the schema and destination as the second key) by
 * each ordered claim until it commits. The heads are read from a snapshot:
 * without it, a claim could read a retried older forward as its source's
 * head while another instance's claim of a later one was not yet committed,
 * and both would be delivering at once. Ordered claims of one destination
 * thus take turns; claims are short, and a source goes one at a time anyway.
 */
const ORDERED_CLAIM_LOCK = 7_305_162;

type LeasedRow = ForwardRow & { attempt_started_at: string | null };

/**
 * The outbox on PostgreSQL (see `Outbox`). Several instances claim from it at
 * once: `FOR UPDATE SKIP LOCKED` gives each forward to one of them, and the
 * lease fences a late outcome (an outcome counts only for the attempt that
 * is still current).
 */
export class PostgresOutbox implements Outbox {
  constructor(private readonly db: PostgresRunner) {}

  async claim(request: ClaimRequest): Promise<ClaimedForward[]> {
    const { destination, now } = request;
    return this.db.transaction(async (client) => {
      if (request.ordered) {
        await client.query(`SELECT pg_advisory_xact_lock(${ORDERED_CLAIM_LOCK}, hashtext(current_schema() || '/' || $1))`, [
          destination,
        ]);
      }
      const expired = await client.query<LeasedRow>(
        `SELECT ${FORWARD_COLUMNS}, attempt_started_at FROM forwards
         WHERE status = 'delivering' AND destination = $1 AND next_attempt_at <= $2 FOR UPDATE SKIP LOCKED`,
        [destination, now],
      );
      for (const row of expired.rows) {
        const forward = forwardFromRow(row);
        const startedAt = row.attempt_started_at === null ? now : Number(row.attempt_started_at);
        await client.query(INSERT_ATTEMPT, [
          forward.id,
          forward.attemptCount,
          startedAt,
          Math.max(0, now - startedAt),
          null,
          LEASE_EXPIRED,
        ]);
        const failed = budgetSpent(forward, request.budget, now);
        await client.query(SETTLE, [
          failed ? 'failed' : 'pending',
          failed ? null : now,
          null,
          LEASE_EXPIRED,
          now,
          forward.id,
          forward.attemptCount,
        ]);
      }
      if (expired.rows.length > 0) await client.query(FAILED_AT, [destination, now, LEASE_EXPIRED]);
      if (request.max <= 0) return [];
      const paused = await client.query<{ paused: boolean }>('SELECT paused FROM destinations WHERE name = $1', [destination]);
      if (paused.rows[0]?.paused === true) return [];
      const due = request.ordered
        ? await client.query<{ position: string; size: string | null }>(
            `SELECT position, ${SIZE} FROM forwards WHERE position IN (SELECT position FROM (${HEADS}) heads)
           AND status = 'pending' AND next_attempt_at <= $2
           ORDER BY next_attempt_at, position LIMIT $3 FOR UPDATE SKIP LOCKED`,
            [destination, now, request.max],
          )
        : await client.query<{ position: string; size: string | null }>(
            `SELECT position, ${SIZE} FROM forwards WHERE status = 'pending' AND destination = $1 AND next_attempt_at <= $2
           ORDER BY next_attempt_at, position LIMIT $3 FOR UPDATE SKIP LOCKED`,
            [destination, now, request.max],
          );
      const chosen = withinBytes(due.rows, request.maxBytes);
      if (chosen.length === 0) return [];
      const leaseUntil = now + request.leaseMs;
      // Each forward with its own new lease token.
      const taken = await client.query<ForwardRow>(
        `UPDATE forwards SET status = 'delivering', attempt_count = attempt_count + 1, budget_used = budget_used + 1,
           attempt_started_at = $1, lease_until = $2, next_attempt_at = $2, updated_at = $1, lease = t.l, lease_owner = $5
         FROM unnest($3::bigint[], $4::text[]) AS t (p, l)
         WHERE position = t.p AND status = 'pending' RETURNING ${FORWARD_COLUMNS}`,
        [now, leaseUntil, chosen.map((row) => row.position), chosen.map(() => newLease()), request.owner ?? null],
      );
      const forwards = taken.rows.map(forwardFromRow).sort((a, b) => a.position - b.position);
      const rows = await client.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq = ANY($1::bigint[])`, [
        forwards.map((f) => f.deliverySeq),
      ]);
      const summaries = await client.query<{ delivery_seq: string; destination: string; status: ForwardSummary['status'] }>(
        'SELECT delivery_seq, destination, status FROM forwards WHERE delivery_seq = ANY($1::bigint[]) ORDER BY position',
        [forwards.map((f) => f.deliverySeq)],
      );
      const deliveries = new Map(
        rows.rows.map((row) => {
          const delivery = deliveryFromRow(row);
          delivery.forwards = summaries.rows
            .filter((s) => Number(s.delivery_seq) === delivery.seq)
            .map((s) => ({ destination: s.destination, status: s.status }));
          return [delivery.seq, delivery];
        }),
      );
      const claimed: ClaimedForward[] = [];
      for (const forward of forwards) {
        const delivery = deliveries.get(forward.deliverySeq);
        if (delivery !== undefined) claimed.push({ forward, delivery });
      }
      return claimed;
    });
  }

  settle(outcomes: readonly AttemptOutcome[]): Promise<number> {
    return settleOutcomes(this.db, outcomes);
  }

  /**
   * SKIP LOCKED: a renewal never waits, so it cannot deadlock with a settle
   * of the same forwards (locked in another order); a forward locked is being
   * settled, or taken over because its lease ran out, and is not renewed.
   */
  async renewLeases(owner: string, until: number): Promise<string[]> {
    const result = await this.db.execute<{ id: string }>(
      `UPDATE forwards SET lease_until = $1, next_attempt_at = $1 WHERE position IN (
         SELECT position FROM forwards WHERE status = 'delivering' AND lease_owner = $2 FOR NO KEY UPDATE SKIP LOCKED)
       AND status = 'delivering' AND lease_owner = $2 RETURNING id`,
      [until, owner],
    );
    return result.rows.map((row) => row.id);
  }

  async release(forwards: ReadonlyArray<{ id: string; n: number }>, now: number): Promise<void> {
    if (forwards.length === 0) return;
    await this.db.execute(
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
   */
  private async finish(id: string, lease: string, now: number, nack?: { at: number; budget: RetryBudget }): Promise<LeaseAnswer> {
    if (!holdable(id)) return 'not_found';
    return this.db.transaction(async (client) => {
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

  ack(id: string, lease: string, now: number): Promise<LeaseAnswer> {
    return this.finish(id, lease, now);
  }

  nack(id: string, lease: string, now: number, at: number, budget: RetryBudget): Promise<LeaseAnswer> {
    return this.finish(id, lease, now, { at, budget });
  }

  async get(id: string): Promise<Forward | undefined> {
    if (!holdable(id)) return undefined;
    const row = (await this.db.execute<ForwardRow>(`SELECT ${FORWARD_COLUMNS} FROM forwards WHERE id = $1`, [id])).rows[0];
    return row === undefined ? undefined : forwardFromRow(row);
  }

  async forwardsOf(deliveryId: string): Promise<Array<Forward & { attempts: Attempt[] }>> {
    if (!holdable(deliveryId)) return [];
    const forwards = (
      await this.db.execute<ForwardRow>(
        `SELECT ${FORWARD_COLUMNS} FROM forwards WHERE delivery_seq = (SELECT seq FROM deliveries WHERE id = $1) ORDER BY position`,
        [deliveryId],
      )
    ).rows.map(forwardFromRow);
    if (forwards.length === 0) return [];
    const attempts = new Map<string, Attempt[]>();
    const rows = await this.db.execute<AttemptRow>(
      `SELECT ${ATTEMPT_COLUMNS} FROM forward_attempts
       WHERE forward_id = ANY($1::text[]) ORDER BY forward_id, n`,
      [forwards.map((f) => f.id)],
    );
    for (const row of rows.rows) {
      const list = attempts.get(row.forward_id) ?? [];
      list.push(attemptFromRow(row));
      attempts.set(row.forward_id, list);
    }
    return forwards.map((forward) => ({ ...forward, attempts: attempts.get(forward.id) ?? [] }));
  }

  /** The forwards of each delivery (by seq), for their JSON. */
  async summariesOf(seqs: readonly number[]): Promise<Map<number, ForwardSummary[]>> {
    const bySeq = new Map<number, ForwardSummary[]>();
    if (seqs.length === 0) return bySeq;
    const rows = await this.db.execute<{ delivery_seq: string; destination: string; status: ForwardSummary['status'] }>(
      'SELECT delivery_seq, destination, status FROM forwards WHERE delivery_seq = ANY($1::bigint[]) ORDER BY position',
      [seqs],
    );
    for (const row of rows.rows) {
      const seq = Number(row.delivery_seq);
      const list = bySeq.get(seq) ?? [];
      list.push({ destination: row.destination, status: row.status });
      bySeq.set(seq, list);
    }
    return bySeq;
  }

  async list(query: ForwardQuery): Promise<ListedForward[]> {
    if (![query.destination, query.source].every((value) => value === undefined || holdable(value))) return [];
    const rows = await this.db.execute<ListedForwardRow>(
      `SELECT ${FORWARD_COLUMNS}, ${LAST_ATTEMPT_COLUMN} FROM forwards WHERE position < $1
         AND ($2::text IS NULL OR destination = $2) AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR source = $4)
       ORDER BY position DESC LIMIT $5`,
      [
        query.beforePosition ?? Number.MAX_SAFE_INTEGER,
        query.destination ?? null,
        query.status ?? null,
        query.source ?? null,
        query.limit,
      ],
    );
    return rows.rows.map(listedForwardFromRow);
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
         next_attempt_at, created_at, updated_at)
       SELECT $1, seq, id, source, $2, 'pending', $3, $3, $3, $3 FROM deliveries WHERE id = $4
       RETURNING ${FORWARD_COLUMNS}`,
        [forward.id, forward.destination, now, deliveryId],
      )
    ).rows[0];
    return row === undefined ? undefined : forwardFromRow(row);
  }

  async destinations(): Promise<DestinationState[]> {
    const states = new Map<string, DestinationState>();
    const state = (name: string): DestinationState => stateOf(states, name);
    const counts = await this.db.execute<{ destination: string; status: string; count: string; oldest: string | null }>(
      `SELECT destination, status, count(*) AS count, min(created_at) AS oldest FROM forwards
       WHERE status IN ('pending', 'delivering', 'failed') GROUP BY destination, status`,
    );
    for (const row of counts.rows) {
      const s = state(row.destination);
      if (row.status === 'failed') {
        s.failed += Number(row.count);
        continue;
      }
      s.pending += Number(row.count);
      const oldest = row.oldest === null ? null : Number(row.oldest);
      if (oldest !== null && (s.oldestPendingAt === null || oldest < s.oldestPendingAt)) s.oldestPendingAt = oldest;
    }
    const rows = await this.db.execute<{
      name: string;
      paused: boolean;
      last_success_at: string | null;
      last_failure_at: string | null;
      last_error: string | null;
    }>('SELECT name, paused, last_success_at, last_failure_at, last_error FROM destinations');
    for (const row of rows.rows) {
      const s = state(row.name);
      s.paused = row.paused;
      s.lastSuccessAt = row.last_success_at === null ? null : Number(row.last_success_at);
      s.lastFailureAt = row.last_failure_at === null ? null : Number(row.last_failure_at);
      s.lastError = row.last_error;
    }
    return [...states.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async setPaused(destination: string, paused: boolean): Promise<void> {
    await this.db.execute(
      'INSERT INTO destinations (name, paused) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET paused = excluded.paused',
      [destination, paused],
    );
  }

  async nextDueAt(destination: string, ordered = false): Promise<number | undefined> {
    const result = ordered
      ? await this.db.execute<{ at: string | null }>(`SELECT min(next_attempt_at) AS at FROM (${HEADS}) heads`, [destination])
      : await this.db.execute<{ at: string | null }>(
          `SELECT min(next_attempt_at) AS at FROM forwards WHERE status IN ${UNSETTLED} AND destination = $1`,
          [destination],
        );
    const at = result.rows[0]?.at;
    return at === null || at === undefined ? undefined : Number(at);
  }
}
