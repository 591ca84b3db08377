import { afterEach, describe, expect, it } from 'vitest';

import { DestinationServer } from '../helpers/destination-server.js';

import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';

import type { ServerProcess } from '../helpers/server-process.js';
import {
  apiCall,
  destinationsOf,
  duplicated,
  forwardsIn,
  loopbackDestination,
  receiptsById,
  sendSome,
  untilReceived,
  writeConfig,
} from '../helpers/forwarding-process.js';

import { API_TOKEN, ServerChildren, sleep, timedExit } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

/**
 * Forwarding across restarts of a real server process (CONTRACT 5 and 6):
 * a paused destination stays paused through a restart, and SIGTERM with
 * attempts in flight exits 0 within the grace and records every attempt,
 * so that nothing is left `delivering` for a lease to rescue. Each on
 * SQLite and on PostgreSQL.
 * A forward left `delivering` would be sent again after the restart too
 * (released at start on SQLite, its lease taken over on PostgreSQL), but its
 * history would show an interrupted attempt or an expired lease, not the abort.
 */

const SOURCE = 'orders';

const children = new ServerChildren();
let destination: DestinationServer | undefined;
const schemas: string[] = [];
afterEach(async () => {
  await children.cleanup();
  await destination?.close();
  destination = undefined;
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

const onPostgres = await requirePostgres('the PostgreSQL case of test/process/forward-restart.test.ts');

/** The environment of a store: SQLite in the data dir, or a fresh PostgreSQL schema. */
function storeEnv(kind: 'sqlite' | 'postgres'): Record<string, string> {
  if (kind === 'sqlite') return {};
  const schema = freshSchema();
  schemas.push(schema);
  return { RECEPTION_DATABASE_URL: testDatabaseUrl(), RECEPTION_DATABASE_SCHEMA: schema };
}

async function listening(): Promise<DestinationServer> {
  destination = new DestinationServer();
  await destination.listen();
  return destination;
}

function start(
  data: string,
  port: number,
  destinationExtra: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const config = writeConfig(data, {
    destinations: { app: loopbackDestination(port, destinationExtra) },
    sources: { [SOURCE]: { forward: [{ to: 'app' }] } },
  });
  return children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: config, ...env });
}

interface AttemptView {
  n: number;
  status: number | null;
  error: string | null;
}

async function attemptsOf(server: ServerProcess, deliveryId: string): Promise<{ status: string; attempts: AttemptView[] }> {
  const { status, json } = await apiCall<{ items: Array<{ status: string; attempts: AttemptView[] }> }>(
    server,
    `/api/deliveries/${deliveryId}/forwards`,
  );
  expect(status).toBe(200);
  const [forward] = json.items;
  if (forward === undefined) throw new Error(`delivery ${deliveryId} has no forward`);
  return forward;
}

/** SIGTERM; expects exit 0 within `ms`; answers how long it took. */
async function terminate(server: ServerProcess, ms: number): Promise<number> {
  children.signal(server, 'SIGTERM');
  const { code, ms: took } = await timedExit(server, ms);
  expect(code).toBe(0);
  return took;
}

describe('forwarding across restarts', { timeout: 60_000 }, () => {
  it.for(['sqlite', 'postgres'] as const)(
    '%s: keeps a paused destination paused through a restart; resuming sends everything',
    async (kind, { skip }) => {
      if (kind === 'postgres' && !onPostgres) skip();
      const dest = await listening();
      const data = children.dataDir();
      const env = storeEnv(kind);
      const first = await start(data, dest.port, {}, env);
      const before = await sendSome(first, SOURCE, 3, 'before-pause');
      await untilReceived(dest, before, 10_000);

      expect((await apiCall(first, '/api/destinations/app/pause', 'POST')).status).toBe(204);
      await terminate(first, 10_000);
      const second = await start(data, dest.port, {}, env);
      expect(await destinationsOf(second)).toMatchObject([{ name: 'app', kind: 'http', paused: true, pending: 0 }]);

      const held = await sendSome(second, SOURCE, 20, 'while-paused');
      // Two of the dispatcher's polls (1 s each) and the wake-ups of 20 commits: nothing goes out.
      await sleep(2500);
      const received = receiptsById(dest);
      expect(held.filter((id) => received.has(id))).toEqual([]);
      expect(await destinationsOf(second)).toMatchObject([{ name: 'app', paused: true, pending: 20, failed: 0 }]);
      expect((await forwardsIn(second, 'pending', 'app')).map((f) => f.deliveryId).sort()).toEqual([...held].sort());

      expect((await apiCall(second, '/api/destinations/app/resume', 'POST')).status).toBe(204);
      const inMs = await untilReceived(dest, held, 10_000);
      await eventually(
        async () => (await destinationsOf(second))[0]?.pending === 0,
        10_000,
        () => 'forwards still pending after the resume',
      );
      expect(await destinationsOf(second)).toMatchObject([{ name: 'app', paused: false, pending: 0, failed: 0 }]);
      expect(duplicated(dest)).toEqual([]);
      console.info(
        `[forward-restart, pause, ${kind}] 20 held through a restart while paused; all arrived ${Math.round(inMs)} ms after the resume`,
      );
    },
  );

  it.for(['sqlite', 'postgres'] as const)(
    '%s: SIGTERM with attempts in flight: they finish within the grace and are recorded, exit 0, and the rest is sent after a restart',
    async (kind, { skip }) => {
      if (kind === 'postgres' && !onPostgres) skip();
      const dest = await listening();
      dest.answer = () => ({ status: 204, delayMs: 2000 });
      const data = children.dataDir();
      const destination = { timeoutMs: 5000, concurrency: 10 };
      const env = { RECEPTION_SHUTDOWN_GRACE_MS: '5000', ...storeEnv(kind) };
      const first = await start(data, dest.port, destination, env);
      const ids = await sendSome(first, SOURCE, 20, 'in-flight');
      // Ten attempts (the concurrency) reached the destination, which answers them 2 s later.
      await eventually(() => dest.requests.length >= 10, 10_000, 'the attempts did not start');
      const inFlight = [...receiptsById(dest).keys()];
      const tookMs = await terminate(first, 5000 + 2000);
      // It waited for the answers (2 s), well within the grace.
      expect(tookMs).toBeLessThan(5000);

      dest.answer = () => ({ status: 204 });
      const restarted = performance.now();
      const second = await start(data, dest.port, destination, env);
      // The attempts in flight at SIGTERM were recorded as they ended: succeeded, once.
      for (const id of inFlight) {
        expect(await attemptsOf(second, id)).toMatchObject({
          status: 'succeeded',
          attempts: [{ n: 1, status: 204, error: null }],
        });
      }
      await untilReceived(dest, ids, 15_000);
      const inMs = performance.now() - restarted;
      await eventually(
        async () => (await destinationsOf(second))[0]?.pending === 0,
        10_000,
        () => 'forwards still pending after a restart',
      );
      expect(await forwardsIn(second, 'delivering')).toEqual([]);
      expect(duplicated(dest)).toEqual([]);
      console.info(
        `[forward-restart, SIGTERM within grace, ${kind}] ${inFlight.length} attempts in flight at SIGTERM, exit 0 after ` +
          `${Math.round(tookMs)} ms; the other ${ids.length - inFlight.length} arrived within ${Math.round(inMs)} ms of the restart; no duplicate`,
      );
    },
  );

  it.for(['sqlite', 'postgres'] as const)(
    '%s: SIGTERM with attempts slower than the grace: they are aborted and recorded, exit 0, and all are sent again after a restart',
    async (kind, { skip }) => {
      if (kind === 'postgres' && !onPostgres) skip();
      const dest = await listening();
      dest.answer = () => ({ status: 204, delayMs: 4000 });
      const data = children.dataDir();
      const destination = { timeoutMs: 10_000, concurrency: 10 };
      const env = { RECEPTION_SHUTDOWN_GRACE_MS: '500', ...storeEnv(kind) };
      const first = await start(data, dest.port, destination, env);
      const ids = await sendSome(first, SOURCE, 20, 'aborted');
      await eventually(() => dest.requests.length >= 10, 10_000, 'the attempts did not start');
      const inFlight = [...receiptsById(dest).keys()];
      const tookMs = await terminate(first, 4000);
      // The grace (500 ms), then the aborts recorded: long before the destination would have answered.
      expect(tookMs).toBeLessThan(3000);

      dest.answer = () => ({ status: 204 });
      const restarted = performance.now();
      const second = await start(data, dest.port, destination, env);
      await untilReceived(dest, ids, 15_000);
      const inMs = performance.now() - restarted;
      await eventually(
        async () => (await destinationsOf(second))[0]?.pending === 0,
        10_000,
        () => 'forwards still pending after a restart: an aborted attempt was left delivering',
      );
      expect(await forwardsIn(second, 'delivering')).toEqual([]);
      // Each aborted attempt is in the history as such (not a lease that ran out), then the attempt that succeeded.
      for (const id of inFlight) {
        expect(await attemptsOf(second, id)).toMatchObject({
          status: 'succeeded',
          attempts: [
            { n: 1, status: null, error: 'aborted: Reception is shutting down' },
            { n: 2, status: 204, error: null },
          ],
        });
      }
      const twice = duplicated(dest);
      // The destination had read each aborted request: those arrive twice, and nothing else does.
      expect(twice.sort()).toEqual([...inFlight].sort());
      console.info(
        `[forward-restart, SIGTERM past the grace, ${kind}] ${inFlight.length} attempts aborted at the grace, exit 0 after ` +
          `${Math.round(tookMs)} ms; all ${ids.length} arrived within ${Math.round(inMs)} ms of the restart; ${twice.length} received twice (the aborted ones)`,
      );
    },
  );
});
