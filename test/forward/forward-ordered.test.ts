import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

describe.each(STORES)('ordered delivery, pause and sending again (%s)', (kind) => {
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

  const start = async (settings: Record<string, unknown>): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'ordered forwarding tests'))) return undefined;
    server = await startForwarding(kind, {
      destinations: { app: { url: destination.url, allowPrivateNetwork: true, retry: { initialMs: 5, maxMs: 30 }, ...settings } },
      sources: { a: { forward: [{ to: 'app' }] }, b: { forward: [{ to: 'app' }] } },
    });
    return server;
  };

  it('never lets a later delivery of a source overtake one that is failing', async () => {
    // Every delivery fails twice before it succeeds: a destination without order would see later ones in between.
    // A 500, not a 503: a 503 would slow the whole destination down (docs/circuits.md), which is not what this is about.
    const failures = new Map<string, number>();
    destination.answer = (request) => {
      const id = String(request.headers['webhook-id']);
      const seen = failures.get(id) ?? 0;
      failures.set(id, seen + 1);
      return { status: seen < 2 ? 500 : 200 };
    };
    const running = await start({ ordered: true, concurrency: 10 });
    if (running === undefined) return;
    const sentA: string[] = [];
    const sentB: string[] = [];
    for (let i = 0; i < 6; i++) {
      sentA.push(await send(running, 'a', `{"i":${i}}`));
      sentB.push(await send(running, 'b', `{"i":${i}}`));
    }
    await eventually(() => destination.requests.filter((r) => r.body.length > 0).length === 36, 20_000);
    for (const [source, sent] of [
      ['a', sentA],
      ['b', sentB],
    ] as const) {
      const seen = destination.requests
        .filter((r) => r.headers['x-reception-source'] === source)
        .map((r) => String(r.headers['webhook-id']));
      // Each id arrives three times in a row, and the ids in seq order.
      expect(seen).toEqual(sent.flatMap((id) => [id, id, id]));
    }
    // The two sources were not held up by each other: their attempts interleave.
    const sources = destination.requests.map((r) => r.headers['x-reception-source']);
    expect(sources.indexOf('b')).toBeLessThan(sources.lastIndexOf('a'));
  });

  it('a paused destination keeps its forwards pending; resume sends them', async () => {
    const running = await start({});
    if (running === undefined) return;
    expect((await api(running, '/api/destinations/app/pause', { method: 'POST' })).status).toBe(204);
    const id = await send(running, 'a', '{"n":1}');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(destination.requests).toEqual([]);
    expect((await forwardsOf(running, id))[0]?.status).toBe('pending');
    const listed = await api<{ items: Array<{ name: string; paused: boolean; pending: number }> }>(running, '/api/destinations');
    expect(listed.json.items).toEqual([expect.objectContaining({ name: 'app', paused: true, pending: 1 })]);
    expect((await api(running, '/api/destinations/app/resume', { method: 'POST' })).status).toBe(204);
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    expect((await api(running, '/api/destinations/nope/pause', { method: 'POST' })).status).toBe(404);
  });

  it('sends a delivery again as a new forward, and cancels one that waits', async () => {
    destination.answer = () => ({ status: 500 });
    const running = await start({ retry: { attempts: 50, initialMs: 60_000, maxMs: 60_000 } });
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.attempts.length === 1);
    const [waiting] = await forwardsOf(running, id);
    expect(waiting?.status).toBe('pending');
    expect((await api(running, `/api/forwards/${waiting?.id ?? ''}/cancel`, { method: 'POST' })).status).toBe(204);
    expect((await forwardsOf(running, id))[0]?.status).toBe('cancelled');
    destination.answer = () => ({ status: 200 });
    const again = await api<{ id: string; status: string; destination: string; attemptCount: number }>(
      running,
      `/api/deliveries/${id}/forward`,
      { method: 'POST', body: { destination: 'app' } },
    );
    expect(again.status).toBe(201);
    expect(again.json).toMatchObject({ destination: 'app', status: 'pending', attemptCount: 0 });
    await eventually(async () => (await forwardsOf(running, id)).find((f) => f.id === again.json.id)?.status === 'succeeded');
    expect(destination.requestsFor(id).map((r) => r.headers['x-reception-attempt'])).toEqual(['1', '1']);
    expect((await api(running, `/api/deliveries/${id}/forward`, { method: 'POST', body: { destination: 'nope' } })).status).toBe(
      404,
    );
    expect((await api(running, '/api/deliveries/nope/forward', { method: 'POST', body: { destination: 'app' } })).status).toBe(
      404,
    );
    expect((await api(running, '/api/forwards/nope/cancel', { method: 'POST' })).status).toBe(404);
  });
});
