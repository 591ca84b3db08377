import { afterEach, describe, expect, it } from 'vitest';

import { DestinationServer } from '../helpers/destination-server.js';

import type { ServerProcess } from '../helpers/server-process.js';
import {
  apiCall,
  destinationsOf,
  duplicated,
  forwardsIn,
  logEntries,
  loopbackDestination,
  receiptsById,
  sendSome,
  untilReceived,
  writeConfig,
} from '../helpers/forwarding-process.js';

import { API_TOKEN, ServerChildren, sleep } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

/**
 * Destinations change with the config file (CONTRACT 4 and 6): on SIGHUP a
 * real server process starts forwarding to a destination and a route added
 * at runtime; a destination removed at runtime stops being sent to, and its
 * unsettled forwards stay `pending`, listed in GET /api/destinations with
 * kind "removed", until it comes back.
 */

const SOURCE = 'orders';

const children = new ServerChildren();
let destination: DestinationServer | undefined;
afterEach(async () => {
  await children.cleanup();
  await destination?.close();
  destination = undefined;
});

/** Rewrites the config file, sends SIGHUP and waits for the "config reloaded" line; answers it. */
async function reload(server: ServerProcess, file: string, config: unknown, dir: string): Promise<Record<string, unknown>> {
  const seen = logEntries(server).filter((entry) => entry.msg === 'config reloaded').length;
  writeConfig(dir, config);
  children.signal(server, 'SIGHUP');
  await eventually(
    () => logEntries(server).filter((entry) => entry.msg === 'config reloaded').length > seen,
    10_000,
    `no "config reloaded" line after SIGHUP (${file})`,
  );
  return logEntries(server).filter((entry) => entry.msg === 'config reloaded')[seen] ?? {};
}

async function forwardsOfDelivery(server: ServerProcess, id: string): Promise<unknown[]> {
  const { status, json } = await apiCall<{ items: unknown[] }>(server, `/api/deliveries/${id}/forwards`);
  expect(status).toBe(200);
  return json.items;
}

describe('SIGHUP and destinations', () => {
  it('starts forwarding to a destination added at runtime, and keeps the forwards of a removed one pending until it returns', async () => {
    destination = new DestinationServer();
    await destination.listen();
    const dest = destination;
    const data = children.dataDir();
    const withoutApp = { sources: { [SOURCE]: {} } };
    const withApp = {
      destinations: { app: loopbackDestination(dest.port, { retry: { attempts: 1000, initialMs: 50, maxMs: 200 } }) },
      sources: { [SOURCE]: { forward: [{ to: 'app' }] } },
    };
    const file = writeConfig(data, withoutApp);
    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: file });

    // No destination yet: deliveries have no forwards.
    const [unrouted] = await sendSome(server, SOURCE, 1, 'before');
    expect(await forwardsOfDelivery(server, unrouted ?? '')).toEqual([]);
    expect(await destinationsOf(server)).toEqual([]);

    // Added at runtime: new deliveries are forwarded.
    expect(await reload(server, file, withApp, data)).toMatchObject({ destinations: 1 });
    expect(await destinationsOf(server)).toMatchObject([{ name: 'app', kind: 'http', paused: false, pending: 0 }]);
    const routed = await sendSome(server, SOURCE, 5, 'added');
    await untilReceived(dest, routed, 10_000);
    expect(receiptsById(dest).has(unrouted ?? '')).toBe(false);

    // The destination fails for a while: its forwards are retried, pending.
    dest.answer = () => ({ status: 503 });
    const failing = await sendSome(server, SOURCE, 5, 'failing');
    await untilReceived(dest, failing, 10_000);

    // Removed at runtime: nothing more is sent; the forwards stay pending, shown as a removed destination's.
    expect(await reload(server, file, withoutApp, data)).toMatchObject({ destinations: 0 });
    // An attempt in flight at the reload may still end (its dispatcher stops with a grace); then nothing.
    await sleep(700);
    const sentAtRemoval = dest.requests.length;
    const after = await sendSome(server, SOURCE, 2, 'after-removal');
    await sleep(2000);
    expect(dest.requests.length).toBe(sentAtRemoval);
    for (const id of after) expect(await forwardsOfDelivery(server, id)).toEqual([]);
    expect(await destinationsOf(server)).toMatchObject([{ name: 'app', kind: 'removed', url: null, pending: 5, failed: 0 }]);
    expect((await forwardsIn(server, 'pending', 'app')).map((f) => f.deliveryId).sort()).toEqual([...failing].sort());
    expect(await forwardsIn(server, 'delivering')).toEqual([]);

    // Back, and answering: the pending forwards go out.
    dest.answer = () => ({ status: 204 });
    expect(await reload(server, file, withApp, data)).toMatchObject({ destinations: 1 });
    const returned = performance.now();
    await eventually(
      async () => (await destinationsOf(server))[0]?.pending === 0,
      10_000,
      () => 'the pending forwards did not go out',
    );
    const inMs = performance.now() - returned;
    expect(await destinationsOf(server)).toMatchObject([{ name: 'app', kind: 'http', pending: 0, failed: 0 }]);
    for (const id of failing)
      expect(await forwardsOfDelivery(server, id)).toMatchObject([{ destination: 'app', status: 'succeeded' }]);
    const resent = new Set(dest.requests.slice(sentAtRemoval).map((r) => r.headers['webhook-id']));
    expect(failing.filter((id) => !resent.has(id))).toEqual([]);
    console.info(
      `[forward-reload] 5 forwarded after the destination was added; 5 kept pending while it was removed, ` +
        `no request for 2.7 s; all settled ${Math.round(inMs)} ms after it came back ` +
        `(${duplicated(dest).length} deliveries received more than once: the 503s retried)`,
    );
  }, 60_000);
});
