import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { PublishingFeed } from '../../src/deliveries/commit-feed.js';
import { POLL_MS } from '../../src/forwarding/dispatcher.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

/** A commit feed that tells nobody: a dispatcher finds new forwards only at its poll, or when they are handed to it. */
const silentFeed: PublishingFeed = {
  subscribe: () => () => undefined,
  subscriberCount: 0,
  publish: () => undefined,
};

/** Well under the poll interval: a forward that waited for a claim would take up to POLL_MS. */
const AT_ONCE_MS = 400;

describe.each(STORES)('a forward leased at its commit (%s)', (kind) => {
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;
  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination.close();
  });

  const start = async (settings: Record<string, unknown> = {}): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'forwards leased at the commit'))) return undefined;
    server = await startForwarding(
      kind,
      {
        destinations: { app: { url: destination.url, allowPrivateNetwork: true, concurrency: 4, ...settings } },
        sources: { a: { forward: [{ to: 'app' }] } },
      },
      { feed: silentFeed },
    );
    return server;
  };

  it('is sent at once, with no claim and no wake-up: the commit feed silent, each arrives long before the next poll', async () => {
    const running = await start();
    if (running === undefined) return;
    expect(POLL_MS).toBeGreaterThanOrEqual(2.5 * AT_ONCE_MS);
    // One after another: after each attempt the dispatcher has just claimed (nothing) and sleeps a whole poll.
    for (let i = 0; i < 6; i++) {
      const id = await send(running, 'a', `{"i":${i}}`);
      // From the answer, that is from the commit: a slow fsync on a busy machine delays both alike.
      const answeredAt = Date.now();
      await eventually(() => destination.requestsFor(id).length > 0, 5000);
      const [received] = destination.requestsFor(id);
      expect(received?.at, `delivery ${i} reached the destination within ${AT_ONCE_MS} ms of its answer`).toBeLessThan(
        answeredAt + AT_ONCE_MS,
      );
      expect(received?.headers['x-reception-attempt']).toBe('1');
    }
    // Each recorded as its first attempt, succeeded: the lease taken at the commit is the attempt's.
    await eventually(async () => {
      const listed = await api<{ items: Array<{ status: string; attemptCount: number }> }>(
        running,
        '/api/forwards?destination=app',
      );
      return listed.json.items.length === 6 && listed.json.items.every((f) => f.status === 'succeeded' && f.attemptCount === 1);
    }, 5000);
  });

  it('waits pending while its destination is paused, and is sent on resume', async () => {
    const running = await start();
    if (running === undefined) return;
    expect((await api(running, '/api/destinations/app/pause', { method: 'POST' })).status).toBe(204);
    const id = await send(running, 'a', '{"paused":true}');
    expect((await forwardsOf(running, id))[0]).toMatchObject({ status: 'pending', attempts: [] });
    await new Promise((resolve) => setTimeout(resolve, AT_ONCE_MS));
    expect(destination.requestsFor(id)).toEqual([]);
    expect((await api(running, '/api/destinations/app/resume', { method: 'POST' })).status).toBe(204);
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded', 5000);
    expect(destination.requestsFor(id)).toHaveLength(1);
  });

  it('beyond the room of its dispatcher waits pending, then is claimed: every one arrives once', async () => {
    // Two slots, each held 1 s: of ten sent at once, two are leased at the commit, the rest claimed as slots free.
    destination.answer = () => ({ status: 200, delayMs: 1000 });
    const running = await start({ concurrency: 2 });
    if (running === undefined) return;
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => send(running, 'a', `{"i":${i}}`)));
    // Never more than the two slots at once, those leased at the commit included.
    expect(destination.requests.length).toBeLessThanOrEqual(2);
    await eventually(
      async () =>
        (await Promise.all(ids.map(async (id) => (await forwardsOf(running, id))[0]?.status))).every((s) => s === 'succeeded'),
      20_000,
    );
    for (const id of ids) expect(destination.requestsFor(id)).toHaveLength(1);
  });

  it('of an ordered destination is never leased at the commit: it waits for its claim', async () => {
    destination.answer = () => 'hang';
    const running = await start({ ordered: true, timeoutMs: 5000 });
    if (running === undefined) return;
    const id = await send(running, 'a', '{"ordered":true}');
    expect((await forwardsOf(running, id))[0]).toMatchObject({ status: 'pending', attempts: [] });
  });
});
