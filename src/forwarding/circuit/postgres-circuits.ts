import type pg from 'pg';
import type { PostgresRunner } from '../../platform/db/postgres/runner.js';
import { afterOutcomes, closedCircuit, type Breaker, type Circuit, type CircuitChange, type CircuitEvent } from './circuit.js';
import { CIRCUIT_COLUMNS, circuitFromRow, circuitValues, sameCircuit, type CircuitRow } from './circuit-row.js';

/**
 * The circuits on PostgreSQL, shared by every instance on the database
 * (docs/circuits.md). Lock order, everywhere: the destination's row in
 * `destinations` before its circuit's, so that two settles never wait on each other.
 */

/** Locks the circuit's row (making it if there is none) and reads it: one round trip. */
const LOCK = `INSERT INTO destination_circuits (name) VALUES ($1)
  ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING ${CIRCUIT_COLUMNS}`;
const PUT = `UPDATE destination_circuits SET state = $2, since = $3, consecutive_failures = $4, open_until = $5,
  cooldown_ms = $6, last_error = $7 WHERE name = $1`;

/**
 * A batch of successes only: the destination's last success, and the circuit
 * closed with its count reset, in the statement the outbox ran anyway. The
 * UPDATE matches (and writes) only a circuit that is not already closed and
 * clean, so that the usual success costs nothing more; it answers the state
 * it had. The join on `d` runs the INSERT (the `destinations` lock) first.
 */
export const SUCCEEDED_AND_CLOSED = `WITH d AS (
    INSERT INTO destinations (name, last_success_at) VALUES ($1, $2)
    ON CONFLICT (name) DO UPDATE SET last_success_at = greatest(destinations.last_success_at, excluded.last_success_at)
    RETURNING name
  ), before AS (
    SELECT c.name, c.state FROM destination_circuits c JOIN d ON d.name = c.name
    WHERE c.state <> 'closed' OR c.consecutive_failures > 0 FOR UPDATE OF c
  )
  UPDATE destination_circuits c SET state = 'closed', consecutive_failures = 0, open_until = NULL,
    since = CASE WHEN before.state = 'closed' THEN c.since ELSE $2::bigint END
  FROM before WHERE c.name = before.name
  RETURNING before.state AS was, ${CIRCUIT_COLUMNS.split(', ')
    .map((column) => `c.${column}`)
    .join(', ')}`;

/** After SUCCEEDED_AND_CLOSED: the circuit as it is now, and whether it closed. */
export function closedBySuccess(
  rows: ReadonlyArray<CircuitRow & { was: string }>,
  at: number,
): {
  circuit: Circuit;
  changes: CircuitChange[];
} {
  const row = rows[0];
  if (row === undefined) return { circuit: closedCircuit(), changes: [] };
  return {
    circuit: circuitFromRow(row),
    changes: row.was === 'closed' ? [] : [{ kind: 'closed', at, error: null }],
  };
}

/** Inside the settle's transaction, after `destinations`: counts the events; writes only a changed circuit. */
export async function countOutcomes(
  client: pg.PoolClient,
  name: string,
  events: readonly CircuitEvent[],
  breaker: Breaker,
): Promise<{ circuit: Circuit; changes: CircuitChange[] }> {
  const before = circuitFromRow((await client.query<CircuitRow>(LOCK, [name])).rows[0]);
  const after = afterOutcomes(before, events, breaker);
  if (!sameCircuit(before, after.circuit)) await client.query(PUT, [name, ...circuitValues(after.circuit)]);
  return after;
}

export async function readCircuit(db: PostgresRunner, name: string): Promise<Circuit> {
  const rows = await db.execute<CircuitRow>(`SELECT ${CIRCUIT_COLUMNS} FROM destination_circuits WHERE name = $1`, [name]);
  return circuitFromRow(rows.rows[0]);
}

export async function readCircuits(db: PostgresRunner): Promise<Map<string, Circuit>> {
  const rows = await db.execute<CircuitRow>(`SELECT ${CIRCUIT_COLUMNS} FROM destination_circuits`);
  return new Map(rows.rows.map((row) => [row.name, circuitFromRow(row)]));
}

/** Forgets the circuit; true when it was open or half open. */
export async function resetCircuit(db: PostgresRunner, name: string): Promise<boolean> {
  const rows = await db.execute<{ state: string }>('DELETE FROM destination_circuits WHERE name = $1 RETURNING state', [name]);
  const state = rows.rows[0]?.state;
  return state !== undefined && state !== 'closed';
}

/** Open (or a probe's window over) → half open, in one statement: exactly one instance takes the probe. */
export async function takeProbe(db: PostgresRunner, name: string, now: number, until: number): Promise<boolean> {
  const result = await db.execute(
    `UPDATE destination_circuits SET state = 'half_open', since = $1, open_until = $2
     WHERE name = $3 AND state IN ('open', 'half_open') AND open_until <= $1`,
    [now, until, name],
  );
  return result.rowCount === 1;
}
