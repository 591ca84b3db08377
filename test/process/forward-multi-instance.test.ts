import { afterAll, describe, expect, it } from 'vitest';

import { DestinationServer } from '../helpers/destination-server.js';

import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';

import type { ServerProcess } from '../helpers/server-process.js';
import { listAll, sendLoad } from '../helpers/webhook-load.js';

import { apiCall, destinationsOf, duplicated, receiptsById, untilReceived, writeConfig } from '../helpers/forwarding-process.js';

import { API_TOKEN, ServerChildren, withTimeout } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

/**
 * CONTRACT 6 with several instances: "each forward is attempted by one
 * instance at a time (a lease); the lease of an instance that died is taken
 * over when it expires." Three real server processes share one PostgreSQL
 * schema and forward one source to one destination; deliveries go to them
 * round-robin; one is SIGKILLed mid-load while the destination is up (and
 * answers after 20 ms). Every acknowledged delivery reaches the destination;
 * each instance says who it is in a header of its own config, so that the
 * test sees who sent what: no instance sends a forward twice, and a delivery
 * that arrives twice was sent by the killed instance first and by a
 * survivor only after the kill (its lease taken over).
 */

const SUITE = 'the forwarding multi-instance test (test/process/forward-multi-instance.test.ts)';
const run = await requirePostgres(SUITE);

const SOURCE = 'orders';
const SENDERS = 12;
const KILL_AFTER = 250;
const TARGET_ACKED = 600;
const NAMES = ['a', 'b', 'c'] as const;
/** The instance killed. */
const KILLED = 'c';
/** Each attempt's timeout; the lease is the default (10 s, renewed while an instance lives: CONTRACT 6 "After a crash"). */
const TIMEOUT_MS = 2000;

describe.runIf(run)('forwarding from three instances on one PostgreSQL schema', () => {
  const children = new ServerChildren();
  const schema = freshSchema();
  const destination = new DestinationServer();

  afterAll(async () => {
    await children.cleanup();
    await destination.close();
    await dropSchema(schema);
  }, 30_000);

  it('forwards every acknowledged delivery through a SIGKILL, each sent by one live instance at a time', async () => {
    await destination.listen();
    destination.answer = () => ({ status: 204, delayMs: 20 });
    const configDir = children.dataDir();
    const instances = await Promise.all(
      NAMES.map((name) =>
        children.start({
          RECEPTION_DATABASE_URL: testDatabaseUrl(),
          RECEPTION_DATABASE_SCHEMA: schema,
          RECEPTION_DATABASE_POOL: '4',
          RECEPTION_DATA: children.dataDir(),
          RECEPTION_TOKEN: API_TOKEN,
          RECEPTION_CONFIG: writeConfig(
            configDir,
            {
              destinations: {
                app: {
                  url: destination.url,
                  allowPrivateNetwork: true,
                  timeoutMs: TIMEOUT_MS,
                  concurrency: 10,
                  retry: { attempts: 1000, initialMs: 50, maxMs: 500 },
                  headers: { 'X-Instance': name },
                },
              },
              sources: { [SOURCE]: { forward: [{ to: 'app' }] } },
            },
            `reception-${name}.json`,
          ),
        }),
      ),
    );
    const byName = new Map(NAMES.map((name, i) => [name, instances[i]]));
    const killed = byName.get(KILLED);
    const [a] = instances;
    if (killed === undefined || a === undefined) throw new Error('three instances expected');

    const alive = new Set<ServerProcess>(instances);
    let turn = 0;
    let acked = 0;
    let stopped = false;
    const load = sendLoad({
      senders: SENDERS,
      source: SOURCE,
      label: 'fwd-multi',
      target: () => {
        const live = instances.filter((instance) => alive.has(instance));
        return live[turn++ % live.length]?.url;
      },
      running: () => !stopped,
      deadline: performance.now() + 60_000,
      pauseAfterFailureMs: 50,
      onAck: () => {
        acked++;
      },
    });
    let killedAt = 0;
    try {
      await eventually(() => acked >= KILL_AFTER, 30_000, `only ${acked} acknowledged before the kill`);
      alive.delete(killed);
      killedAt = Date.now();
      children.signal(killed, 'SIGKILL');
      await withTimeout(killed.exited, 5000, 'the killed instance did not exit');
      await eventually(() => acked >= TARGET_ACKED, 30_000, `only ${acked} acknowledged after the kill`);
    } finally {
      stopped = true;
    }
    const tally = await load;
    const ids = tally.acked.map((x) => x.id);
    const killedAcked = tally.acked.filter((x) => x.target === killed.url).length;

    const allInMs = await untilReceived(destination, ids, 60_000);
    await eventually(
      async () => (await destinationsOf(a)).every((d) => d.pending === 0),
      30_000,
      () => 'forwards still pending or delivering 30 s after every delivery arrived',
    );
    expect(await destinationsOf(a)).toMatchObject([{ name: 'app', kind: 'http', pending: 0, failed: 0 }]);

    // Who sent what: per delivery, the instances' receipts in arrival order.
    const senders = new Map<string, Array<{ by: string; at: number }>>();
    for (const request of destination.requests) {
      const id = String(request.headers['webhook-id']);
      const list = senders.get(id) ?? [];
      list.push({ by: String(request.headers['x-instance']), at: request.at });
      senders.set(id, list);
    }
    const sentBy = new Map<string, number>(NAMES.map((name) => [name, 0]));
    for (const list of senders.values()) for (const { by } of list) sentBy.set(by, (sentBy.get(by) ?? 0) + 1);
    // The killed instance was forwarding, and so were the others.
    for (const name of NAMES) expect(sentBy.get(name), `requests sent by instance ${name}`).toBeGreaterThan(0);
    // No instance sent a forward twice.
    const twiceByOne = [...senders].filter(([, list]) => new Set(list.map((r) => r.by)).size !== list.length);
    expect(twiceByOne).toEqual([]);
    // A delivery that arrived twice: the killed instance sent it first, a survivor only after the kill.
    const twice = duplicated(destination);
    const overlapping = twice.filter((id) => {
      const list = senders.get(id) ?? [];
      return list[0]?.by !== KILLED || list.slice(1).some((r) => r.by === KILLED || r.at < killedAt);
    });
    expect(overlapping.map((id) => `${id}: ${JSON.stringify(senders.get(id))}`)).toEqual([]);
    // Their lease ran out and a survivor recorded it as a failed attempt before sending again.
    const expiredOf = async (id: string): Promise<boolean> => {
      const { json } = await apiCall<{ items: Array<{ attempts: Array<{ error: string | null }> }> }>(
        a,
        `/api/deliveries/${id}/forwards`,
      );
      return json.items[0]?.attempts.some((attempt) => attempt.error?.startsWith('lease expired') === true) ?? false;
    };
    const notExpired: string[] = [];
    for (const id of twice) if (!(await expiredOf(id))) notExpired.push(id);
    expect(notExpired).toEqual([]);
    // Nothing was forwarded that is not in the inbox.
    const stored = new Set((await listAll(a.url, API_TOKEN, SOURCE)).map((d) => d.id));
    expect([...receiptsById(destination).keys()].filter((id) => !stored.has(id))).toEqual([]);

    console.info(
      `[forward-multi-instance] ${ids.length} acknowledged (${killedAcked} by the killed instance), ` +
        `${tally.failed.length} without an answer, ${tally.refused.length} refused; requests by instance: ` +
        `${NAMES.map((name) => `${name} ${sentBy.get(name) ?? 0}`).join(', ')} (${KILLED} killed); all arrived ` +
        `${Math.round(allInMs)} ms after the load ended; ${twice.length} deliveries received twice (sent by ${KILLED} before the kill, ` +
        'its outcome not recorded, then by a survivor after its lease ran out)',
    );
  }, 120_000);
});
