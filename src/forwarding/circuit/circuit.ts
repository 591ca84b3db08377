/**
 * A destination's circuit (docs/circuits.md, CONTRACT 11 in docs/contract.md):
 * closed → open after `failures` consecutive failed attempts → half open
 * when the cooldown ends (one forward, the probe, is tried) → closed on a
 * success, or open again with the cooldown doubled (at most 600 s).
 *
 * The state is stored (a row per destination), so that every instance on
 * one database sees the same circuit; this module only computes how a
 * circuit changes, the stores keep it.
 */
export type CircuitState = 'closed' | 'open' | 'half_open';

export interface Circuit {
  state: CircuitState;
  /** When it entered its state (ms); null: closed and never opened. */
  since: number | null;
  /** Failed attempts since the last success, counted in the order they settled. */
  consecutiveFailures: number;
  /** Open: when its cooldown ends; half open: when the probe's window ends (another instance may then probe). Null when closed. */
  until: number | null;
  /** The cooldown of its latest opening (ms): doubled by each failed probe. */
  cooldownMs: number;
  /** The error of the latest failed attempt counted. */
  lastError: string | null;
}

/** A destination's `breaker` with its defaults filled in. */
export interface Breaker {
  failures: number;
  cooldownMs: number;
}

export const BREAKER_DEFAULTS = { failures: 10, cooldownSeconds: 30 } as const;
/** The longest cooldown, however many probes failed. */
export const MAX_COOLDOWN_MS = 600_000;

/** A circuit that never opened. */
export function closedCircuit(): Circuit {
  return { state: 'closed', since: null, consecutiveFailures: 0, until: null, cooldownMs: 0, lastError: null };
}

/** An attempt's outcome as the circuit counts it: the destination answered (`ok`) or failed. */
export interface CircuitEvent {
  ok: boolean;
  /** When it settled (ms). */
  at: number;
  error: string | null;
}

/** A change the issues and metrics hear of: opened (from closed), reopened (a failed probe), closed. */
export interface CircuitChange {
  kind: 'opened' | 'reopened' | 'closed';
  at: number;
  error: string | null;
}

/**
 * The circuit after some outcomes, in the order they settled. A success
 * closes it from any state (the destination answers) and resets the count;
 * a failure counts, opens a closed circuit at `failures` in a row, and
 * re-opens a half-open one with the cooldown doubled. Failures while open
 * (attempts that were under way when it opened) only count.
 */
export function afterOutcomes(
  before: Circuit,
  events: readonly CircuitEvent[],
  breaker: Breaker,
): { circuit: Circuit; changes: CircuitChange[] } {
  const c: Circuit = { ...before };
  const changes: CircuitChange[] = [];
  for (const e of events) {
    if (e.ok) {
      if (c.state !== 'closed') {
        c.state = 'closed';
        c.since = e.at;
        c.until = null;
        changes.push({ kind: 'closed', at: e.at, error: null });
      }
      c.consecutiveFailures = 0;
      continue;
    }
    c.consecutiveFailures++;
    c.lastError = e.error;
    if (c.state === 'closed' && c.consecutiveFailures >= breaker.failures) {
      c.cooldownMs = Math.min(MAX_COOLDOWN_MS, breaker.cooldownMs);
      open(c, e.at);
      changes.push({ kind: 'opened', at: e.at, error: e.error });
    } else if (c.state === 'half_open') {
      c.cooldownMs = Math.min(MAX_COOLDOWN_MS, Math.max(c.cooldownMs, breaker.cooldownMs) * 2);
      open(c, e.at);
      changes.push({ kind: 'reopened', at: e.at, error: e.error });
    }
  }
  return { circuit: c, changes };
}

function open(c: Circuit, at: number): void {
  c.state = 'open';
  c.since = at;
  c.until = at + c.cooldownMs;
}

/** Whether no attempt may start: the circuit is open or half open (the probe is sent apart, by the instance that took it). */
export function blocks(circuit: Circuit): boolean {
  return circuit.state !== 'closed';
}

/** Whether the circuit waits for a probe now: its cooldown (or a probe's window) has ended. */
export function probeDue(circuit: Circuit, now: number): boolean {
  return circuit.state !== 'closed' && circuit.until !== null && circuit.until <= now;
}
