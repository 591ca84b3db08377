import type { AttemptOutcome } from '../outbox/outbox.js';
import type { CircuitEvent } from './circuit.js';

/** The outcomes a circuit counts, in the order they settled (those that name `circuit`). */
export function circuitEvents(outcomes: readonly AttemptOutcome[]): CircuitEvent[] {
  const events: CircuitEvent[] = [];
  for (const o of outcomes)
    if (o.circuit !== undefined) events.push({ ok: o.circuit === 'success', at: o.startedAt + o.durationMs, error: o.error });
  return events;
}
