import { afterEach, describe, expect, it } from 'vitest';

import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import {
  apiCall,
  loopbackDestination,
  receiptsById,
  sendSome,
  untilReceived,
  writeConfig,
} from '../helpers/forwarding-process.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { API_TOKEN, ServerChildren, withTimeout } from '../helpers/server-children.js';

/**
 * CONTRACT 6 "After a crash" (2026-11-27): "A forward caught mid-attempt by a
 * crash is attempted again within 15 s of the restart: on SQLite every
 * `delivering` forward is released at start; on PostgreSQL each instance
 * renews its leases while it lives, and the leases of one that stopped
 * renewing are taken over within 15 s." Real servers with the default lease,
 * a destination on loopback that answers slowly (attempts in flight and
 * forwards claimed ahead at the kill), then quickly after it.
 */

const SOURCE = 'takeover';
const COUNT = 20;
/** The contract's bound, from the restart (or, with another instance running, from the kill). */
const WITHIN_MS = 15_000;
/** Slow enough that every attempt of the killed process is still in flight at the kill. */
const SLOW_MS = 5_000;

const onPostgres = await requirePostgres('the forward take-over tests (test/process/forward-take-over.test.ts)');

const children = new ServerChildren();
let destination = new DestinationServer();
const schemas: string[] = [];
afterEach(async () => {
  await children.cleanup();
  await destination.close();
  destination = new DestinationServer();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

type Kind = 'sqlite' | 'postgres';

/** A server forwarding SOURCE to the destination, 5 at a time; its header says which instance sent a request. */
function startOn(kind: Kind, place: { data: string; schema: string }, name: string): Promise<ServerProcess> {
  const config = writeConfig(
    children.dataDir(),
    {
      destinations: {
        app: loopbackDestination(destination.port, { concurrency: 5, timeoutMs: 10_000, headers: { 'X-Instance': name } }),
      },
      sources: { [SOURCE]: { forward: [{ to: 'app' }] } },
    },
    `reception-${name}.json`,
  );
  return children.start({
    RECEPTION_DATA: place.data,
    RECEPTION_TOKEN: API_TOKEN,
    RECEPTION_CONFIG: config,
    ...(kind === 'postgres'
      ? { RECEPTION_DATABASE_URL: testDatabaseUrl(), RECEPTION_DATABASE_SCHEMA: place.schema, RECEPTION_DATABASE_POOL: '4' }
      : {}),
  });
}

function place(): { data: string; schema: string } {
  const schema = freshSchema();
  schemas.push(schema);
  return { data: children.dataDir(), schema };
}

/** Waits until the destination received every id at or after `since` (ms, from `from` when given); answers when the last arrived. */
async function untilAllSince(ids: readonly string[], since: number, ms: number, from?: string): Promise<number> {
  const lastOf = (): number | undefined => {
    let last = since;
    for (const id of ids) {
      const at = destination
        .requestsFor(id)
        .filter((r) => r.at >= since && (from === undefined || r.headers['x-instance'] === from))
        .map((r) => r.at)[0];
      if (at === undefined) return undefined;
      last = Math.max(last, at);
    }
    return last;
  };
  let last: number | undefined;
  await eventually(
    () => (last = lastOf()) !== undefined,
    ms,
    () => `not every delivery arrived again within ${ms} ms`,
  );
  return last ?? since;
}

async function kill(server: ServerProcess): Promise<void> {
  children.signal(server, 'SIGKILL');
  await withTimeout(server.exited, 5000, 'the killed server did not exit');
}

/** The errors of the attempts of a delivery's forward. */
async function attemptErrors(server: ServerProcess, id: string): Promise<Array<string | null>> {
  const { json } = await apiCall<{ items: Array<{ attempts: Array<{ error: string | null }> }> }>(
    server,
    `/api/deliveries/${id}/forwards`,
  );
  return json.items[0]?.attempts.map((a) => a.error) ?? [];
}

describe.each(['sqlite', 'postgres'] as const)('kill -9 with attempts in flight, then a restart, on %s', (kind) => {
  it.runIf(kind === 'sqlite' || onPostgres)(
    'attempts every forward again within 15 s of the restart',
    async () => {
      await destination.listen();
      destination.answer = () => ({ status: 204, delayMs: SLOW_MS });
      const where = place();
      const first = await startOn(kind, where, 'first');
      const ids = await sendSome(first, SOURCE, COUNT, kind);
      await eventually(() => destination.requests.length >= 5, 10_000, 'the first process had no attempts in flight');
      const inFlight = [...receiptsById(destination).keys()];
      await kill(first);
      destination.answer = () => ({ status: 204 });

      const restarted = Date.now();
      const second = await startOn(kind, where, 'second');
      const listeningMs = Date.now() - restarted;
      // Every forward, those in flight at the kill included, sent by the restarted process.
      const allInMs = (await untilAllSince(ids, restarted, 40_000)) - restarted;
      console.info(
        `[forward-take-over, ${kind}] ${COUNT} forwards, ${inFlight.length} in flight at the kill; ` +
          `all arrived ${Math.round(allInMs)} ms after the restart (which listened after ${Math.round(listeningMs)} ms)`,
      );
      expect(allInMs).toBeLessThan(WITHIN_MS);
      // Each attempt caught by the kill is recorded as failed, with what happened to it.
      const expected = kind === 'sqlite' ? 'interrupted: Reception stopped' : 'lease expired';
      await eventually(
        async () => {
          const errors = await Promise.all(inFlight.map((id) => attemptErrors(second, id)));
          return errors.every((list) => list[0]?.startsWith(expected) === true && list.length === 2);
        },
        10_000,
        `the interrupted attempts were not recorded as "${expected}"`,
      );
    },
    90_000,
  );
});

describe.runIf(onPostgres)('kill -9 of one PostgreSQL instance while another runs', () => {
  it("lets the other take over the killed instance's forwards within 15 s of the kill", async () => {
    await destination.listen();
    destination.answer = () => ({ status: 204, delayMs: SLOW_MS });
    const where = place();
    const a = await startOn('postgres', where, 'a');
    const b = await startOn('postgres', where, 'b');
    const ids = await sendSome(a, SOURCE, COUNT, 'ab');
    const byA = (): string[] =>
      destination.requests.filter((r) => r.headers['x-instance'] === 'a').map((r) => String(r.headers['webhook-id']));
    // Both instances claim from the one outbox; on a loaded machine a may start its first attempts late.
    await eventually(
      () => byA().length >= 3,
      30_000,
      () => `instance a had no attempts in flight (requests: ${destination.requests.length}, from a: ${byA().length})`,
    );
    const heldByA = byA();
    const killedAt = Date.now();
    await kill(a);
    destination.answer = () => ({ status: 204 });

    await untilReceived(destination, ids, 40_000);
    const lastFirstArrival = Math.max(...ids.map((id) => Math.min(...destination.requestsFor(id).map((r) => r.at))));
    // The forwards a was sending when it died, sent again by b.
    const lastTakenOver = await untilAllSince(heldByA, killedAt, 40_000, 'b');
    console.info(
      `[forward-take-over, postgres a+b] ${heldByA.length} attempts of a in flight at its kill; b sent the last of them ` +
        `${lastTakenOver - killedAt} ms after the kill; every delivery had arrived ${Math.max(0, lastFirstArrival - killedAt)} ms after it`,
    );
    expect(lastTakenOver - killedAt).toBeGreaterThan(0);
    expect(lastTakenOver - killedAt).toBeLessThan(WITHIN_MS);
    expect(lastFirstArrival - killedAt).toBeLessThan(WITHIN_MS);
    for (const id of heldByA) expect((await attemptErrors(b, id))[0]).toMatch(/^lease expired/);
  }, 90_000);
});
