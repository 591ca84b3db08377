import { readCircuits } from '../circuit/postgres-circuits.js';
// What the PostgreSQL outbox reads and changes nothing: forwards, their attempts, the destinations' states (see `Outbox`).

import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { holdable } from '../../platform/db/postgres/text-values.js';
import type { ForwardSummary } from '../../deliveries/delivery-store.js';
import {
  ATTEMPT_COLUMNS,
  attemptFromRow,
  FORWARD_COLUMNS,
  forwardFromRow,
  LAST_ATTEMPT_COLUMN,
  listedForwardFromRow,
  stateOf,
  type AttemptRow,
  type ForwardRow,
  type ListedForwardRow,
} from './forward-row.js';
import type { Attempt, DestinationState, Forward, ForwardQuery, ListedForward } from './outbox.js';
import { HEADS, UNSETTLED } from './postgres-outbox-sql.js';

export async function getForward(db: PostgresRunner, id: string): Promise<Forward | undefined> {
  if (!holdable(id)) return undefined;
  const row = (await db.execute<ForwardRow>(`SELECT ${FORWARD_COLUMNS} FROM forwards WHERE id = $1`, [id])).rows[0];
  return row === undefined ? undefined : forwardFromRow(row);
}

export async function forwardsOfDelivery(
  db: PostgresRunner,
  deliveryId: string,
): Promise<Array<Forward & { attempts: Attempt[] }>> {
  if (!holdable(deliveryId)) return [];
  const forwards = (
    await db.execute<ForwardRow>(
      `SELECT ${FORWARD_COLUMNS} FROM forwards WHERE delivery_seq = (SELECT seq FROM deliveries WHERE id = $1) ORDER BY position`,
      [deliveryId],
    )
  ).rows.map(forwardFromRow);
  if (forwards.length === 0) return [];
  const attempts = new Map<string, Attempt[]>();
  const rows = await db.execute<AttemptRow>(
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
export async function forwardSummaries(db: PostgresRunner, seqs: readonly number[]): Promise<Map<number, ForwardSummary[]>> {
  const bySeq = new Map<number, ForwardSummary[]>();
  if (seqs.length === 0) return bySeq;
  const rows = await db.execute<{ delivery_seq: string; destination: string; status: ForwardSummary['status'] }>(
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

export async function listForwards(db: PostgresRunner, query: ForwardQuery): Promise<ListedForward[]> {
  if (![query.destination, query.source].every((value) => value === undefined || holdable(value))) return [];
  const rows = await db.execute<ListedForwardRow>(
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

export async function destinationStates(db: PostgresRunner): Promise<DestinationState[]> {
  const states = new Map<string, DestinationState>();
  const state = (name: string): DestinationState => stateOf(states, name);
  const counts = await db.execute<{ destination: string; status: string; count: string; oldest: string | null }>(
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
  const rows = await db.execute<{
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
  for (const [name, circuit] of await readCircuits(db)) state(name).circuit = circuit;
  return [...states.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export async function nextDueTime(db: PostgresRunner, destination: string, ordered = false): Promise<number | undefined> {
  const result = ordered
    ? await db.execute<{ at: string | null }>(`SELECT min(next_attempt_at) AS at FROM (${HEADS}) heads`, [destination])
    : await db.execute<{ at: string | null }>(
        `SELECT min(next_attempt_at) AS at FROM forwards WHERE status IN ${UNSETTLED} AND destination = $1`,
        [destination],
      );
  const at = result.rows[0]?.at;
  return at === null || at === undefined ? undefined : Number(at);
}
