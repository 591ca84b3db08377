import { afterEach, describe, expect, it } from 'vitest';

import type { InboxStore } from '../../src/store/inbox-store.js';
import type { RunningApp } from '../helpers/app.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

interface Claimed {
  forwardId: string;
  attempt: number;
  delivery: { id: string; source: string; body: unknown; forwards: unknown[] };
}

describe.each(STORES)('pull destinations (%s)', (kind) => {
  let server: RunningApp<InboxStore> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async (settings: Record<string, unknown> = {}): Promise<RunningApp<InboxStore> | undefined> => {
    if (!(await storeAvailable(kind, 'pull destination tests'))) return undefined;
    server = await startForwarding(kind, {
      destinations: { worker: { pull: true, ...settings } },
      sources: { a: { forward: [{ to: 'worker' }] }, b: { forward: [{ to: 'worker' }] } },
    });
    return server;
  };
  const claim = async (running: RunningApp<InboxStore>, body: Record<string, unknown>): Promise<Claimed[]> => {
    const answer = await api<{ items: Claimed[] }>(running, '/api/destinations/worker/claim', { method: 'POST', body });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json.items;
  };

  it('hands out claimed deliveries whole, once per lease; ack makes them succeeded', async () => {
    const running = await start();
    if (running === undefined) return;
    const ids = [await send(running, 'a', '{"n":1}'), await send(running, 'a', '{"n":2}'), await send(running, 'b', '{"n":3}')];
    const first = await claim(running, { max: 2, visibilitySeconds: 30 });
    expect(first.map((c) => c.delivery.id)).toEqual(ids.slice(0, 2));
    expect(first[0]).toMatchObject({
      attempt: 1,
      delivery: { source: 'a', body: { n: 1 }, forwards: [{ destination: 'worker', status: 'delivering' }] },
    });
    const second = await claim(running, { max: 10 });
    expect(second.map((c) => c.delivery.id)).toEqual([ids[2]]);
    expect(await claim(running, { max: 10 })).toEqual([]);
    for (const item of [...first, ...second]) {
      expect((await api(running, `/api/forwards/${item.forwardId}/ack`, { method: 'POST' })).status).toBe(204);
    }
    for (const id of ids) expect((await forwardsOf(running, id))[0]?.status).toBe('succeeded');
    expect((await api(running, '/api/forwards/no-such-forward/ack', { method: 'POST' })).status).toBe(404);
  });

  it('nack makes a forward claimable again after its delay, counting an attempt', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    const [item] = await claim(running, {});
    expect(
      (await api(running, `/api/forwards/${item?.forwardId ?? ''}/nack`, { method: 'POST', body: { delaySeconds: 0 } })).status,
    ).toBe(204);
    const [again] = await claim(running, {});
    expect(again).toMatchObject({ forwardId: item?.forwardId, attempt: 2 });
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts).toEqual([expect.objectContaining({ n: 1, error: 'nack' })]);
    expect(
      (await api(running, `/api/forwards/${again?.forwardId ?? ''}/nack`, { method: 'POST', body: { delaySeconds: 3600 } }))
        .status,
    ).toBe(204);
    expect(await claim(running, {})).toEqual([]);
    const [later] = await forwardsOf(running, id);
    expect(later?.status).toBe('pending');
    expect(Date.parse(later?.nextAttemptAt ?? '') - Date.now()).toBeGreaterThan(3_500_000);
  });

  it('a lease that runs out is claimable at once and spends an attempt; the last one makes it failed', async () => {
    const running = await start({ retry: { attempts: 2 } });
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    expect(await claim(running, { visibilitySeconds: 1 })).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const [again] = await claim(running, { visibilitySeconds: 1 });
    expect(again?.attempt).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await claim(running, {})).toEqual([]);
    const [forward] = await forwardsOf(running, id);
    expect(forward?.status).toBe('failed');
    expect(forward?.attempts.map((a) => a.error)).toEqual([
      expect.stringMatching(/^lease expired/),
      expect.stringMatching(/^lease expired/),
    ]);
  });

  it('an ordered pull destination hands out one forward per source at a time', async () => {
    const running = await start({ ordered: true });
    if (running === undefined) return;
    const a1 = await send(running, 'a', '{"n":1}');
    const a2 = await send(running, 'a', '{"n":2}');
    const b1 = await send(running, 'b', '{"n":3}');
    const first = await claim(running, { max: 10 });
    expect(first.map((c) => c.delivery.id).sort()).toEqual([a1, b1].sort());
    expect(await claim(running, { max: 10 })).toEqual([]);
    const headA = first.find((c) => c.delivery.id === a1);
    await api(running, `/api/forwards/${headA?.forwardId ?? ''}/ack`, { method: 'POST' });
    expect((await claim(running, { max: 10 })).map((c) => c.delivery.id)).toEqual([a2]);
  });

  it('claims nothing while paused, and refuses a destination that is pushed to or unknown', async () => {
    const running = await start();
    if (running === undefined) return;
    await send(running, 'a', '{"n":1}');
    expect((await api(running, '/api/destinations/worker/pause', { method: 'POST' })).status).toBe(204);
    expect(await claim(running, {})).toEqual([]);
    expect((await api(running, '/api/destinations/worker/resume', { method: 'POST' })).status).toBe(204);
    expect(await claim(running, {})).toHaveLength(1);
    const unknown = await api<{ code: string }>(running, '/api/destinations/nope/claim', { method: 'POST', body: {} });
    expect(unknown).toMatchObject({ status: 404, json: { code: 'not_found' } });
    const bad = await api<{ code: string }>(running, '/api/destinations/worker/claim', { method: 'POST', body: { max: 0 } });
    expect(bad.status).toBe(400);
    await eventually(() => true);
  });
});
