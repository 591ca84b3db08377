import { afterAll, describe, expect, it } from 'vitest';

import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { resolveDestinations } from '../../src/forwarding/destination.js';
import { PostgresStore } from '../../src/inbox/postgres-store.js';
import { SourceRules } from '../../src/receive/source-rules.js';
import { startAppOn, type RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send } from '../helpers/forwarding-app.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';

/**
 * The circuit is stored, not kept per process (docs/circuits.md): three
 * instances on one PostgreSQL schema forward to one failing destination;
 * the failures that any of them sees count on one circuit, which opens for
 * all (none sends while it is open), and exactly one of them sends the probe.
 */

const run = await requirePostgres('the shared circuit test (test/forward/forward-circuit-shared.test.ts)');
const NAMES = ['a', 'b', 'c'] as const;
const COOLDOWN_MS = 1500;

interface CircuitView {
  state: string;
  since: string | null;
  consecutiveFailures: number;
  until: string | null;
}

describe.runIf(run)('one circuit for three instances on one PostgreSQL schema', () => {
  const schema = freshSchema();
  const destination = new DestinationServer();
  const apps: Array<RunningApp<PostgresStore>> = [];

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await destination.close();
    await dropSchema(schema);
  }, 20_000);

  it('opens on the failures any instance sees, holds every instance back while open, and one instance probes', async () => {
    await destination.listen();
    let healthy = false;
    destination.answer = () => ({ status: healthy ? 200 : 500 });
    for (const name of NAMES) {
      const config: ConfigFile = {
        destinations: {
          app: {
            url: destination.url,
            allowPrivateNetwork: true,
            concurrency: 1,
            retry: { initialMs: 20, maxMs: 50 },
            breaker: { failures: 6, cooldownSeconds: COOLDOWN_MS / 1000 },
            headers: { 'X-Instance': name },
          },
        },
        sources: { shop: { forward: [{ to: 'app' }] } },
      };
      // One after the other: the first migrates the schema.
      const store = await PostgresStore.open({ connectionString: testDatabaseUrl(), schema });
      apps.push(
        await startAppOn(store, {
          rules: SourceRules.fromConfig(config, { maxBodyBytes: 1024 * 1024, anyJson: false }),
          destinations: resolveDestinations(config.destinations),
        }),
      );
    }
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const app = apps[i % apps.length];
      if (app === undefined) throw new Error('no app');
      ids.push(await send(app, 'shop', `{"n":${i}}`));
    }
    const circuitOn = async (app: RunningApp<PostgresStore>): Promise<CircuitView> => {
      const { json } = await api<{ items: Array<{ name: string; circuit: CircuitView }> }>(app, '/api/destinations');
      const item = json.items.find((d) => d.name === 'app');
      if (item === undefined) throw new Error('no destination');
      return item.circuit;
    };
    const [a, b, c] = apps;
    if (a === undefined || b === undefined || c === undefined) throw new Error('three apps');
    let open: CircuitView | undefined;
    await eventually(async () => (open = await circuitOn(a)).state === 'open', 8000, 'the circuit never opened');
    if (open?.since == null || open.until === null) throw new Error('an open circuit without times');
    const since = Date.parse(open.since);
    const until = Date.parse(open.until);
    // Every instance reads the one circuit.
    // (Attempts under way when it opened may still count: the number of failures can grow.)
    const opened = { state: 'open', since: open.since, until: open.until };
    expect(await circuitOn(b)).toMatchObject(opened);
    expect(await circuitOn(c)).toMatchObject(opened);
    for (const app of apps) {
      const metrics = await fetch(`${app.url}/metrics`, { headers: app.auth }).then((r) => r.text());
      expect(metrics).toContain('reception_destination_circuit_state{destination="app"} 2');
    }
    const before = destination.requests.filter((r) => r.at <= since);
    const senders = new Set(before.map((r) => String(r.headers['x-instance'])));
    // The failures that opened it were seen by more than one instance.
    expect(senders.size).toBeGreaterThan(1);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now() - 200)));
    healthy = true;
    await eventually(
      async () => (await Promise.all(ids.map((id) => forwardsOf(a, id)))).every(([f]) => f?.status === 'succeeded'),
      8000,
      'the forwards never arrived once the destination answered',
    );
    const requests = destination.requests;
    // Nothing from any instance while open (a grace for attempts that had started as it opened).
    expect(requests.filter((r) => r.at > since + 200 && r.at < until)).toEqual([]);
    // One probe, from one instance; nothing else until its answer closed the circuit.
    const after = requests.filter((r) => r.at >= until);
    const [probe, next] = after;
    if (probe === undefined || next === undefined || probe.answeredAt === undefined) throw new Error('no probe');
    expect(next.at).toBeGreaterThanOrEqual(probe.answeredAt);
    expect(await circuitOn(c)).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });
});
