import { closedCircuit, type Circuit, type CircuitState } from './circuit.js';

/** A row of `destination_circuits` (numbers as the driver gives them: PostgreSQL's BIGINT as text). */
export interface CircuitRow {
  name: string;
  state: string;
  since: number | string | null;
  consecutive_failures: number;
  open_until: number | string | null;
  cooldown_ms: number;
  last_error: string | null;
}

export const CIRCUIT_COLUMNS = 'name, state, since, consecutive_failures, open_until, cooldown_ms, last_error';

export function circuitFromRow(row: CircuitRow | undefined): Circuit {
  if (row === undefined) return closedCircuit();
  return {
    state: row.state as CircuitState,
    since: row.since === null ? null : Number(row.since),
    consecutiveFailures: row.consecutive_failures,
    until: row.open_until === null ? null : Number(row.open_until),
    cooldownMs: row.cooldown_ms,
    lastError: row.last_error,
  };
}

/** The values of a row, in CIRCUIT_COLUMNS order after the name. */
export function circuitValues(c: Circuit): [string, number | null, number, number | null, number, string | null] {
  return [c.state, c.since, c.consecutiveFailures, c.until, c.cooldownMs, c.lastError];
}

export function sameCircuit(a: Circuit, b: Circuit): boolean {
  return (
    a.state === b.state &&
    a.since === b.since &&
    a.consecutiveFailures === b.consecutiveFailures &&
    a.until === b.until &&
    a.cooldownMs === b.cooldownMs &&
    a.lastError === b.lastError
  );
}
