import { responseColumn } from './forward-row.js';
import type { AttemptOutcome, CircuitSettled } from './outbox.js';
import type { Breaker } from '../circuit/circuit.js';
import { circuitEvents } from '../circuit/circuit-events.js';
import { closedBySuccess, countOutcomes, SUCCEEDED_AND_CLOSED } from '../circuit/postgres-circuits.js';
import type { CircuitRow } from '../circuit/circuit-row.js';
import { closedCircuit } from '../circuit/circuit.js';
import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { FAILED_AT, SUCCEEDED_AT } from './postgres-outbox-sql.js';
import type { DeadLetter } from './dead-letters.js';

/**
 * The outcomes of a batch as parallel arrays, for `unnest`: one statement
 * records every attempt, one settles every forward, whatever the batch's size
 * (CONTRACT 6 "After a crash": an outcome is recorded within 100 ms of the
 * answer). Row by row, two round trips an outcome built a backlog of seconds
 * under load, and a crash then repeated every attempt in it.
 */
const OUTCOMES = `unnest($1::text[], $2::int[], $3::bigint[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::bigint[],
    $10::text[], $11::text[])
  AS o (id, n, started_at, duration_ms, status, error, response, state, next_at, transform_name, transform_version)`;

/**
 * Records attempt n of each forward that still exists and has taken it: an
 * outcome may come back after its delivery was deleted (the foreign key
 * would fail the whole settle). The row lock keeps a delete from slipping in
 * between; an attempt already recorded stays. `response` is the answer as
 * JSON text (NULL when there was none).
 */
const INSERT_ATTEMPTS = `INSERT INTO forward_attempts (forward_id, n, started_at, duration_ms, status, error, response,
    transform_name, transform_version)
  SELECT f.id, o.n, o.started_at, o.duration_ms, o.status, o.error, o.response, o.transform_name, o.transform_version
  FROM ${OUTCOMES}
  JOIN forwards f ON f.id = o.id AND f.attempt_count >= o.n
  ORDER BY f.id FOR KEY SHARE OF f
  ON CONFLICT DO NOTHING`;

/** Settles each forward whose attempt is still the current one (the others changed nothing). */
const SETTLE_ALL = `UPDATE forwards AS f SET status = o.state, next_attempt_at = o.next_at, lease_until = NULL, lease = NULL,
    attempt_started_at = NULL, last_status = o.status, last_error = o.error, updated_at = o.started_at + o.duration_ms
  FROM ${OUTCOMES}
  WHERE f.id = o.id AND f.status = 'delivering' AND f.attempt_count = o.n
  RETURNING f.destination, o.state, o.started_at + o.duration_ms AS at, o.error`;

/**
 * Records a batch of outcomes in one transaction of a few statements; answers
 * how many were still current, and adds the forwards it failed to `deadLetters`.
 */
export async function settleOutcomes(
  db: PostgresRunner,
  outcomes: readonly AttemptOutcome[],
  deadLetters: DeadLetter[] = [],
): Promise<number> {
  return outcomes.length === 0 ? 0 : (await settleBatch(db, outcomes, deadLetters)).current;
}

/**
 * One destination's outcomes, counted on its circuit in the same transaction
 * (docs/circuits.md): a batch of successes only folds the circuit into the
 * statement that records the last success (no extra round trip, no write
 * when the circuit is clean); a batch with a failure locks, reads and (when
 * it changed) writes the circuit's row, after the `destinations` row. The
 * forwards it failed are added to `deadLetters`.
 */
export async function settleCounted(
  db: PostgresRunner,
  destination: string,
  outcomes: readonly AttemptOutcome[],
  breaker: Breaker,
  deadLetters: DeadLetter[] = [],
): Promise<CircuitSettled> {
  if (outcomes.length === 0) return { current: 0, circuit: closedCircuit(), changes: [] };
  const settled = await settleBatch(db, outcomes, deadLetters, { destination, breaker });
  return { current: settled.current, ...(settled.circuit ?? { circuit: closedCircuit(), changes: [] }) };
}

async function settleBatch(
  db: PostgresRunner,
  outcomes: readonly AttemptOutcome[],
  deadLetters: DeadLetter[],
  counting?: { destination: string; breaker: Breaker },
): Promise<{ current: number; circuit?: Omit<CircuitSettled, 'current'> }> {
  const values = [
    outcomes.map((o) => o.forwardId),
    outcomes.map((o) => o.n),
    outcomes.map((o) => o.startedAt),
    outcomes.map((o) => o.durationMs),
    outcomes.map((o) => o.status),
    outcomes.map((o) => o.error),
    outcomes.map((o) => responseColumn(o.response)),
    outcomes.map((o) => o.next.state),
    outcomes.map((o) => (o.next.state === 'pending' ? o.next.at : null)),
    outcomes.map((o) => o.transform?.name ?? null),
    outcomes.map((o) => o.transform?.version ?? null),
  ];
  return db.transaction(async (client) => {
    await client.query(INSERT_ATTEMPTS, values);
    const settled = await client.query<{ destination: string; state: string; at: string; error: string | null }>(
      SETTLE_ALL,
      values,
    );
    const succeeded = new Map<string, number>();
    const failed = new Map<string, { at: number; error: string | null }>();
    for (const row of settled.rows) {
      const at = Number(row.at);
      if (row.state === 'succeeded') succeeded.set(row.destination, Math.max(at, succeeded.get(row.destination) ?? 0));
      // A forward its transform dropped (CONTRACT 10) neither succeeded nor failed.
      else if (row.state === 'cancelled') continue;
      else if ((failed.get(row.destination)?.at ?? 0) <= at) failed.set(row.destination, { at, error: row.error });
    }
    const events = counting === undefined ? [] : circuitEvents(outcomes);
    const onlySuccesses = counting !== undefined && events.length > 0 && events.every((e) => e.ok);
    let circuit: Omit<CircuitSettled, 'current'> | undefined;
    for (const [name, at] of succeeded) {
      if (onlySuccesses && name === counting.destination) {
        const rows = await client.query<CircuitRow & { was: string }>(SUCCEEDED_AND_CLOSED, [name, at]);
        circuit = closedBySuccess(rows.rows, at);
      } else await client.query(SUCCEEDED_AT, [name, at]);
    }
    for (const [name, { at, error }] of failed) await client.query(FAILED_AT, [name, at, error]);
    if (counting !== undefined && events.length > 0 && circuit === undefined)
      circuit = await countOutcomes(client, counting.destination, events, counting.breaker);
    const letters = settled.rows
      .filter((row) => row.state === 'failed')
      .map((row) => ({ destination: row.destination, error: row.error }));
    // Told only once the transaction commits (a retried transaction runs this again).
    deadLetters.length = 0;
    deadLetters.push(...letters);
    return { current: settled.rows.length, ...(circuit === undefined ? {} : { circuit }) };
  });
}
