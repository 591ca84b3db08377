import type { Database } from '../../platform/db/sqlite/driver.js';
import { afterOutcomes, type Breaker, type Circuit, type CircuitChange, type CircuitEvent } from './circuit.js';
import { CIRCUIT_COLUMNS, circuitFromRow, circuitValues, sameCircuit, type CircuitRow } from './circuit-row.js';

type Values = [string, string, number | null, number, number | null, number, string | null];

function statements(db: Database) {
  return {
    get: db.prepare<[string], CircuitRow>(`SELECT ${CIRCUIT_COLUMNS} FROM destination_circuits WHERE name = ?`),
    getAll: db.prepare<[], CircuitRow>(`SELECT ${CIRCUIT_COLUMNS} FROM destination_circuits`),
    put: db.prepare<Values>(
      `INSERT INTO destination_circuits (${CIRCUIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET state = excluded.state, since = excluded.since,
       consecutive_failures = excluded.consecutive_failures, open_until = excluded.open_until,
       cooldown_ms = excluded.cooldown_ms, last_error = excluded.last_error`,
    ),
    reset: db.prepare<[string], { state: string }>('DELETE FROM destination_circuits WHERE name = ? RETURNING state'),
    probe: db.prepare<[number, number, string, number]>(
      `UPDATE destination_circuits SET state = 'half_open', since = ?, open_until = ?
     WHERE name = ? AND state IN ('open', 'half_open') AND open_until <= ?`,
    ),
  };
}

/** The circuits on SQLite: read, changed inside the outbox's settle transaction, and the probe taken (docs/circuits.md). */
export class SqliteCircuits {
  private readonly q;

  constructor(db: Database) {
    this.q = statements(db);
  }

  read(name: string): Circuit {
    return circuitFromRow(this.q.get.get(name));
  }

  all(): Map<string, Circuit> {
    return new Map(this.q.getAll.all().map((row) => [row.name, circuitFromRow(row)]));
  }

  /** Inside a transaction: counts the events; writes the row only when the circuit changed. */
  count(name: string, events: readonly CircuitEvent[], breaker: Breaker): { circuit: Circuit; changes: CircuitChange[] } {
    const before = this.read(name);
    const after = afterOutcomes(before, events, breaker);
    if (!sameCircuit(before, after.circuit)) this.q.put.run(name, ...circuitValues(after.circuit));
    return after;
  }

  /** Forgets the circuit; true when it was open or half open. */
  reset(name: string): boolean {
    const state = this.q.reset.get(name)?.state;
    return state !== undefined && state !== 'closed';
  }

  /** Open (or a probe's window over) → half open, for one caller: true when this one took the probe. */
  takeProbe(name: string, now: number, until: number): boolean {
    return this.q.probe.run(now, until, name, now).changes === 1;
  }
}
