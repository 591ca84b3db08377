import { describe, expect, it } from 'vitest';
import {
  afterOutcomes,
  closedCircuit,
  MAX_COOLDOWN_MS,
  probeDue,
  type Circuit,
  type CircuitEvent,
} from '../../../src/forwarding/circuit/circuit.js';

const BREAKER = { failures: 3, cooldownMs: 1000 };
const fail = (at: number, error = 'HTTP 500'): CircuitEvent => ({ ok: false, at, error });
const ok = (at: number): CircuitEvent => ({ ok: true, at, error: null });

describe('a destination circuit (the state machine)', () => {
  it('counts failures in a row and opens at `failures`, for the cooldown', () => {
    const { circuit, changes } = afterOutcomes(closedCircuit(), [fail(1), fail(2), fail(3)], BREAKER);
    expect(circuit).toEqual({
      state: 'open',
      since: 3,
      consecutiveFailures: 3,
      until: 1003,
      cooldownMs: 1000,
      lastError: 'HTTP 500',
    });
    expect(changes).toEqual([{ kind: 'opened', at: 3, error: 'HTTP 500' }]);
  });

  it('stays closed below the threshold, and a success resets the count (outcomes in the order they settled)', () => {
    const { circuit, changes } = afterOutcomes(closedCircuit(), [fail(1), fail(2), ok(3), fail(4), fail(5)], BREAKER);
    expect(circuit.state).toBe('closed');
    expect(circuit.consecutiveFailures).toBe(2);
    expect(changes).toEqual([]);
  });

  it('a success on a clean closed circuit changes nothing (nothing to write)', () => {
    const before = closedCircuit();
    const { circuit, changes } = afterOutcomes(before, [ok(1), ok(2)], BREAKER);
    expect(circuit).toEqual(before);
    expect(changes).toEqual([]);
  });

  it('failures while open (attempts under way when it opened) only count: the cooldown stays', () => {
    const open = afterOutcomes(closedCircuit(), [fail(1), fail(2), fail(3)], BREAKER).circuit;
    const { circuit, changes } = afterOutcomes(open, [fail(10)], BREAKER);
    expect(circuit).toMatchObject({ state: 'open', since: 3, until: 1003, consecutiveFailures: 4 });
    expect(changes).toEqual([]);
  });

  it('a failed probe re-opens with the cooldown doubled, up to 600 s; a successful one closes it', () => {
    let c: Circuit = afterOutcomes(closedCircuit(), [fail(1), fail(2), fail(3)], BREAKER).circuit;
    const cooldowns: number[] = [];
    for (let i = 0; i < 12; i++) {
      c = { ...c, state: 'half_open', since: (c.until ?? 0) + 1 };
      const after = afterOutcomes(c, [fail((c.since ?? 0) + 5, 'refused')], BREAKER);
      expect(after.changes).toEqual([{ kind: 'reopened', at: (c.since ?? 0) + 5, error: 'refused' }]);
      c = after.circuit;
      expect(c.until).toBe((c.since ?? 0) + c.cooldownMs);
      cooldowns.push(c.cooldownMs);
    }
    expect(cooldowns.slice(0, 4)).toEqual([2000, 4000, 8000, 16_000]);
    expect(Math.max(...cooldowns)).toBe(MAX_COOLDOWN_MS);
    const closed = afterOutcomes({ ...c, state: 'half_open' }, [ok(99_999_999)], BREAKER);
    expect(closed.circuit).toMatchObject({ state: 'closed', since: 99_999_999, consecutiveFailures: 0, until: null });
    expect(closed.changes).toEqual([{ kind: 'closed', at: 99_999_999, error: null }]);
    // Opening again from closed starts from the configured cooldown.
    const again = afterOutcomes(closed.circuit, [fail(1e8), fail(1e8 + 1), fail(1e8 + 2)], BREAKER).circuit;
    expect(again.cooldownMs).toBe(1000);
  });

  it('a probe is due once the cooldown (or a probe window) has ended, never while closed', () => {
    const open = afterOutcomes(closedCircuit(), [fail(1), fail(2), fail(3)], BREAKER).circuit;
    expect(probeDue(open, 1002)).toBe(false);
    expect(probeDue(open, 1003)).toBe(true);
    expect(probeDue({ ...open, state: 'half_open', until: 5000 }, 4999)).toBe(false);
    expect(probeDue({ ...open, state: 'half_open', until: 5000 }, 5000)).toBe(true);
    expect(probeDue(closedCircuit(), 1e12)).toBe(false);
  });

  it('failures: 1 opens at the first failure', () => {
    expect(afterOutcomes(closedCircuit(), [fail(7)], { failures: 1, cooldownMs: 50 }).circuit).toMatchObject({
      state: 'open',
      until: 57,
    });
  });
});
