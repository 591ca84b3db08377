import { afterEach, describe, expect, it } from 'vitest';

import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { apiCall, duplicated, loopbackDestination, sendSome, untilReceived, writeConfig } from '../helpers/forwarding-process.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { API_TOKEN, ServerChildren, withTimeout } from '../helpers/server-children.js';

/**
 * CONTRACT 6, at least once, for forwards leased in their delivery's commit
 * (docs/forwarding.md, "How a forward goes from the commit to the wire"):
 * each delivery is sent to an idle destination with room, so its forward is
 * stored `delivering`, leased to the instance, and handed to the dispatcher
 * without a claim. The destination holds every request unanswered; the
 * instance is SIGKILLed with those leases held; after a restart on the same
 * store (SQLite: released at start; PostgreSQL: taken over when the lease
 * runs out) every one reaches the destination again.
 */

const SOURCE = 'atcommit';
const COUNT = 4;

const onPostgres = await requirePostgres('the at-commit crash tests (test/process/forward-at-commit-crash.test.ts)');

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

function startOn(kind: Kind, where: { data: string; schema: string }): Promise<ServerProcess> {
  const config = writeConfig(children.dataDir(), {
    // Room for all of them at once: each is leased at its commit.
    destinations: { app: loopbackDestination(destination.port, { concurrency: COUNT, timeoutMs: 30_000 }) },
    sources: { [SOURCE]: { forward: [{ to: 'app' }] } },
  });
  return children.start({
    RECEPTION_DATA: where.data,
    RECEPTION_TOKEN: API_TOKEN,
    RECEPTION_CONFIG: config,
    // A short lease: on PostgreSQL the restarted instance takes the killed one's over when they run out.
    RECEPTION_FORWARD_LEASE_MS: '2000',
    ...(kind === 'postgres'
      ? { RECEPTION_DATABASE_URL: testDatabaseUrl(), RECEPTION_DATABASE_SCHEMA: where.schema, RECEPTION_DATABASE_POOL: '4' }
      : {}),
  });
}

async function forwardOf(
  server: ServerProcess,
  id: string,
): Promise<{ status: string; attempts: Array<{ error: string | null }> }> {
  const { json } = await apiCall<{ items: Array<{ status: string; attempts: Array<{ error: string | null }> }> }>(
    server,
    `/api/deliveries/${id}/forwards`,
  );
  const [forward] = json.items;
  if (forward === undefined) throw new Error(`delivery ${id} has no forward`);
  return forward;
}

describe.each(['sqlite', 'postgres'] as const)('SIGKILL with forwards leased at their commit, on %s', (kind) => {
  it.runIf(kind === 'sqlite' || onPostgres)(
    'sends every one again after a restart',
    async () => {
      await destination.listen();
      destination.answer = () => 'hang';
      const schema = freshSchema();
      schemas.push(schema);
      const where = { data: children.dataDir(), schema };
      const first = await startOn(kind, where);
      const ids = await sendSome(first, SOURCE, COUNT, kind);
      await eventually(() => destination.requests.length >= COUNT, 10_000, 'the forwards were not all in flight');
      // Held by the first instance: delivering, their first attempt in flight and not yet recorded.
      for (const id of ids) expect(await forwardOf(first, id)).toMatchObject({ status: 'delivering', attempts: [] });
      children.signal(first, 'SIGKILL');
      await withTimeout(first.exited, 5000, 'the killed server did not exit');
      destination.answer = () => ({ status: 204 });

      const restartedAt = Date.now();
      const second = await startOn(kind, where);
      const before = destination.requests.length;
      await eventually(
        () => ids.every((id) => destination.requestsFor(id).some((r) => r.at >= restartedAt)),
        30_000,
        'not every forward leased at the commit was sent again after the restart',
      );
      expect(destination.requests.length - before).toBe(COUNT);
      expect(duplicated(destination).sort()).toEqual([...ids].sort());
      await untilReceived(destination, ids, 1000);
      const expected = kind === 'sqlite' ? 'interrupted: Reception stopped' : 'lease expired';
      await eventually(
        async () => {
          const forwards = await Promise.all(ids.map((id) => forwardOf(second, id)));
          return forwards.every(
            (f) => f.status === 'succeeded' && f.attempts.length === 2 && f.attempts[0]?.error?.startsWith(expected) === true,
          );
        },
        10_000,
        `the attempts caught by the kill were not recorded as "${expected}", then succeeded`,
      );
    },
    90_000,
  );
});
