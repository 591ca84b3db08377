import { describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../../inbox/inbox-database.js';
import { PostgresStore } from '../../../inbox/postgres-store.js';
import { SqliteStore } from '../../../inbox/sqlite-store.js';
import { closedCircuit } from '../../circuit/circuit.js';
import type { AttemptOutcome } from '../outbox.js';
import { claim, deliverAll, ids, outcome, T0 } from './outbox-contract-support.js';

const BREAKER = { failures: 3, cooldownMs: 1000 };

/** The rows of `destination_circuits`: a clean circuit has none. */
async function circuitRows(store: InboxDatabase): Promise<number> {
  if (store instanceof SqliteStore)
    return store.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM destination_circuits').get()?.n ?? 0;
  if (store instanceof PostgresStore)
    return Number((await store.pool.query<{ n: string }>('SELECT count(*) AS n FROM destination_circuits')).rows[0]?.n);
  throw new Error('an unknown store');
}

const failed = (o: AttemptOutcome): AttemptOutcome => ({ ...o, circuit: 'failure' });
const answered = (o: AttemptOutcome): AttemptOutcome => ({ ...o, circuit: 'success' });

/** A destination's circuit, stored beside the outbox and changed in the settle's transaction (docs/circuits.md). */
export function describeCircuitContract(store: () => InboxDatabase): void {
  describe('circuits', () => {
    it('a success on a circuit that never failed writes nothing', async () => {
      await deliverAll(store(), [{}, {}]);
      const claimed = await claim(store(), T0);
      const settled = await store().outbox.settleCounting(
        'app',
        claimed.map((c) => answered(outcome(c.forward, T0, { state: 'succeeded' }))),
        BREAKER,
      );
      expect(settled).toEqual({ current: 2, circuit: closedCircuit(), changes: [] });
      expect(await circuitRows(store())).toBe(0);
      expect(await store().outbox.circuit('app')).toEqual(closedCircuit());
    });

    it('opens at `failures` failed attempts in a row; claims take nothing but the probe; one caller takes the probe; a success closes it', async () => {
      await deliverAll(store(), [{}, {}, {}, {}, {}]);
      const claimed = await claim(store(), T0, { max: 3 });
      const outcomes = claimed.map((c, i) => failed(outcome(c.forward, T0 + i * 10, { state: 'pending', at: T0 + 50 })));
      const settled = await store().outbox.settleCounting('app', outcomes, BREAKER);
      expect(settled.current).toBe(3);
      const opened = {
        state: 'open',
        since: T0 + 45,
        consecutiveFailures: 3,
        until: T0 + 1045,
        cooldownMs: 1000,
        lastError: 'HTTP 503',
      };
      expect(settled.circuit).toEqual(opened);
      expect(settled.changes).toEqual([{ kind: 'opened', at: T0 + 45, error: 'HTTP 503' }]);
      expect(await store().outbox.circuit('app')).toEqual(opened);
      expect((await store().outbox.destinations()).find((d) => d.name === 'app')?.circuit).toEqual(opened);
      // Nothing is claimed while open: the waiting forwards spend no attempt.
      expect(await claim(store(), T0 + 500)).toEqual([]);
      expect(await store().outbox.takeProbe('app', T0 + 999, T0 + 5000)).toBe(false);
      const probe = await claim(store(), T0 + 1045, { max: 1, probe: true });
      expect(probe).toHaveLength(1);
      const takers = await Promise.all([1, 2, 3, 4].map(() => store().outbox.takeProbe('app', T0 + 1045, T0 + 5000)));
      expect(takers.filter(Boolean)).toHaveLength(1);
      expect(await store().outbox.circuit('app')).toMatchObject({ state: 'half_open', since: T0 + 1045, until: T0 + 5000 });
      expect(await claim(store(), T0 + 1100)).toEqual([]);
      const [first] = probe;
      if (first === undefined) throw new Error('no probe');
      const closed = await store().outbox.settleCounting(
        'app',
        [answered(outcome(first.forward, T0 + 1100, { state: 'succeeded' }))],
        BREAKER,
      );
      expect(closed.changes).toEqual([{ kind: 'closed', at: T0 + 1125, error: null }]);
      expect(closed.circuit).toMatchObject({ state: 'closed', since: T0 + 1125, consecutiveFailures: 0, until: null });
      expect(await store().outbox.circuit('app')).toEqual(closed.circuit);
      expect(ids(await claim(store(), T0 + 1200))).toHaveLength(4);
    });

    it('a failed probe opens it again for twice the cooldown; a probe window that ran out may be taken again', async () => {
      await deliverAll(store(), [{}, {}, {}, {}]);
      const claimed = await claim(store(), T0, { max: 3 });
      await store().outbox.settleCounting(
        'app',
        claimed.map((c) => failed(outcome(c.forward, T0, { state: 'pending', at: T0 + 50 }))),
        BREAKER,
      );
      const [probe] = await claim(store(), T0 + 1025, { max: 1, probe: true });
      if (probe === undefined) throw new Error('no probe');
      expect(await store().outbox.takeProbe('app', T0 + 1025, T0 + 2000)).toBe(true);
      const reopened = await store().outbox.settleCounting(
        'app',
        [failed(outcome(probe.forward, T0 + 1030, { state: 'pending', at: T0 + 1100 }, { error: 'refused' }))],
        BREAKER,
      );
      expect(reopened.changes).toEqual([{ kind: 'reopened', at: T0 + 1055, error: 'refused' }]);
      expect(reopened.circuit).toMatchObject({ state: 'open', since: T0 + 1055, until: T0 + 3055, cooldownMs: 2000 });
      expect(await store().outbox.takeProbe('app', T0 + 3055, T0 + 4000)).toBe(true);
      // Its prober vanished: once the window ends, another may probe.
      expect(await store().outbox.takeProbe('app', T0 + 3999, T0 + 6000)).toBe(false);
      expect(await store().outbox.takeProbe('app', T0 + 4000, T0 + 6000)).toBe(true);
      // Its settings changed: forgotten, closed and clean (no row), once.
      expect(await store().outbox.resetCircuit('app')).toBe(true);
      expect(await store().outbox.resetCircuit('app')).toBe(false);
      expect(await store().outbox.circuit('app')).toEqual(closedCircuit());
      expect(await circuitRows(store())).toBe(0);
    });

    it('counts only outcomes that name the circuit (not a transform that settled a forward), in their order', async () => {
      await deliverAll(store(), [{}, {}, {}, {}]);
      const claimed = await claim(store(), T0, { max: 4 });
      const [a, b, c, d] = claimed.map((x) => x.forward);
      if (a === undefined || b === undefined || c === undefined || d === undefined) throw new Error('four claimed');
      const settled = await store().outbox.settleCounting(
        'app',
        [
          failed(outcome(a, T0, { state: 'pending', at: T0 + 50 })),
          answered(outcome(b, T0 + 1, { state: 'succeeded' })),
          failed(outcome(c, T0 + 2, { state: 'pending', at: T0 + 50 })),
          outcome(d, T0 + 3, { state: 'failed' }, { error: 'transform failed', status: null }),
        ],
        BREAKER,
      );
      expect(settled.circuit).toMatchObject({ state: 'closed', consecutiveFailures: 1, lastError: 'HTTP 503' });
      expect(settled.changes).toEqual([]);
      expect(await circuitRows(store())).toBe(1);
    });
  });
}
