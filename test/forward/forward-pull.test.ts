import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import type { RunningApp } from '../helpers/app.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';

interface Claimed {
  forwardId: string;
  attempt: number;
  lease: string;
  delivery: { id: string; source: string; body: unknown; forwards: unknown[] };
}

describe.each(STORES)('pull destinations (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async (settings: Record<string, unknown> = {}): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'pull destination tests'))) return undefined;
    server = await startForwarding(kind, {
      destinations: { worker: { pull: true, ...settings } },
      sources: { a: { forward: [{ to: 'worker' }] }, b: { forward: [{ to: 'worker' }] } },
    });
    return server;
  };
  const ack = (running: RunningApp<InboxDatabase>, item: Pick<Claimed, 'forwardId' | 'lease'>) =>
    api<{ code: string }>(running, `/api/forwards/${item.forwardId}/ack`, { method: 'POST', body: { lease: item.lease } });
  const claim = async (running: RunningApp<InboxDatabase>, body: Record<string, unknown>): Promise<Claimed[]> => {
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
      expect(item.lease).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect((await ack(running, item)).status).toBe(204);
    }
    for (const id of ids) expect((await forwardsOf(running, id))[0]?.status).toBe('succeeded');
    const unknown = await api(running, '/api/forwards/no-such-forward/ack', { method: 'POST', body: { lease: 'x' } });
    expect(unknown).toMatchObject({ status: 404, json: { code: 'not_found' } });
  });

  it('nack makes a forward claimable again after its delay, counting an attempt', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    const [item] = await claim(running, {});
    expect(
      (
        await api(running, `/api/forwards/${item?.forwardId ?? ''}/nack`, {
          method: 'POST',
          body: { lease: item?.lease, delaySeconds: 0 },
        })
      ).status,
    ).toBe(204);
    const [again] = await claim(running, {});
    expect(again).toMatchObject({ forwardId: item?.forwardId, attempt: 2 });
    const [forward] = await forwardsOf(running, id);
    expect(forward?.attempts).toEqual([expect.objectContaining({ n: 1, error: 'nack' })]);
    expect(
      (
        await api(running, `/api/forwards/${again?.forwardId ?? ''}/nack`, {
          method: 'POST',
          body: { lease: again?.lease, delaySeconds: 3600 },
        })
      ).status,
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
    expect(headA === undefined ? 0 : (await ack(running, headA)).status).toBe(204);
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
  });

  it('answers a claim as curl sends it: no body means the defaults, an unknown destination is 404 before any body check, a form body a 415 problem that says the JSON type', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    const post = async (name: string, headers: Record<string, string>, body?: string) => {
      const res = await fetch(`${running.url}/api/destinations/${name}/claim`, {
        method: 'POST',
        headers: { ...running.auth, ...headers },
        ...(body === undefined ? {} : { body }),
      });
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        json: JSON.parse(await res.text()) as Record<string, unknown>,
      };
    };
    // `curl -X POST …/nope/claim`, with and without a JSON type, with a body of the wrong shape, and as a form
    // (`curl -d`, the 415 below for a known destination): 404 each time.
    for (const [headers, body] of [
      [{}, undefined],
      [{ 'content-type': 'application/json' }, undefined],
      [{ 'content-type': 'application/json' }, '{"max":"x"}'],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, '{"max":10}'],
      [{ 'content-type': 'text/plain' }, 'max=10'],
    ] as const) {
      expect(await post('nope', headers, body), JSON.stringify(headers)).toMatchObject({
        status: 404,
        json: { code: 'not_found' },
      });
    }
    // The token is still checked first: without it, an unknown destination is 401, not 404.
    const anonymous = await fetch(`${running.url}/api/destinations/nope/claim`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"max":10}',
    });
    expect(anonymous.status).toBe(401);
    // `curl -d '{"max":10}' …/claim`: curl's default type is a form; the problem says what to add.
    const form = await post('worker', { 'content-type': 'application/x-www-form-urlencoded' }, '{"max":10}');
    expect(form).toMatchObject({ status: 415, json: { code: 'unsupported_media_type' } });
    expect(form.type).toMatch(/^application\/problem\+json/);
    expect(form.json.detail).toContain("-H 'content-type: application/json'");
    expect(form.json.detail).toContain('application/x-www-form-urlencoded');
    // No body at all: the defaults (up to 10, 30 s), as `{}`.
    const empty = await post('worker', {});
    expect(empty.status).toBe(200);
    expect(empty.json.items).toEqual([expect.objectContaining({ attempt: 1, delivery: expect.objectContaining({ id }) })]);
  });

  it('two consumers on one expired lease: the first one’s ack and nack are 409 lease_lost and change nothing; the second’s ack holds', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    const [first] = await claim(running, { visibilitySeconds: 1 });
    if (first === undefined) throw new Error('nothing claimed');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const [second] = await claim(running, { visibilitySeconds: 30 });
    if (second === undefined) throw new Error('the expired lease was not claimed again');
    expect(second).toMatchObject({ forwardId: first.forwardId, attempt: 2 });
    expect(second.lease).not.toBe(first.lease);
    const before = await forwardsOf(running, id);
    const nack = await api<{ code: string }>(running, `/api/forwards/${first.forwardId}/nack`, {
      method: 'POST',
      body: { lease: first.lease, delaySeconds: 0 },
    });
    expect(nack).toMatchObject({ status: 409, json: { code: 'lease_lost' } });
    expect(await ack(running, first)).toMatchObject({ status: 409, json: { code: 'lease_lost' } });
    expect(await forwardsOf(running, id)).toEqual(before);
    expect(await claim(running, {})).toEqual([]);
    expect((await ack(running, second)).status).toBe(204);
    const [done] = await forwardsOf(running, id);
    expect(done?.status).toBe('succeeded');
    expect(done?.attempts.map((a) => a.error)).toEqual([expect.stringMatching(/^lease expired/), null]);
  });

  it('refuses an ack or nack without a lease (400 invalid_body), changing nothing', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'a', '{"n":1}');
    const [item] = await claim(running, {});
    for (const [action, body] of [
      ['ack', undefined],
      ['ack', {}],
      ['nack', { delaySeconds: 0 }],
      ['nack', { lease: '' }],
    ] as const) {
      const answer = await api<{ code: string }>(running, `/api/forwards/${item?.forwardId ?? ''}/${action}`, {
        method: 'POST',
        ...(body === undefined ? {} : { body }),
      });
      expect(answer, `${action} ${JSON.stringify(body)}`).toMatchObject({ status: 400, json: { code: 'invalid_body' } });
    }
    expect((await forwardsOf(running, id))[0]).toMatchObject({ status: 'delivering', attempts: [] });
  });

  it('hands out at most 8 MiB of bodies in a claim; the rest stay pending with no attempt spent', async () => {
    const running = await start();
    if (running === undefined) return;
    const body = (n: number): string => `{"n":${n},"pad":"${'x'.repeat(3 * 1024 * 1024)}"}`;
    const ids = [await send(running, 'a', body(1)), await send(running, 'a', body(2)), await send(running, 'a', body(3))];
    const first = await claim(running, { max: 10 });
    expect(first.map((c) => c.delivery.id)).toEqual(ids.slice(0, 2));
    const [left] = await forwardsOf(running, ids[2] ?? '');
    expect(left).toMatchObject({ status: 'pending', attempts: [] });
    const list = await api<{ items: Array<{ deliveryId: string; attemptCount: number; status: string }> }>(
      running,
      '/api/forwards?destination=worker',
    );
    expect(list.json.items.find((f) => f.deliveryId === ids[2])).toMatchObject({ status: 'pending', attemptCount: 0 });
    expect((await claim(running, { max: 10 })).map((c) => c.delivery.id)).toEqual([ids[2]]);
  });
});

describe.each(STORES)('push destinations refuse pull calls (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  let destination: DestinationServer | undefined;
  afterEach(async () => {
    await server?.close();
    await destination?.close();
    server = undefined;
    destination = undefined;
  });

  it('answers claim, ack and nack of a push destination 409 not_pull, and leaves its forward in flight alone', async () => {
    if (!(await storeAvailable(kind, 'pull destination tests'))) return;
    destination = new DestinationServer();
    destination.answer = () => 'hang';
    const url = await destination.listen();
    server = await startForwarding(kind, {
      destinations: { app: { url, allowPrivateNetwork: true, timeoutMs: 60_000 } },
      sources: { a: { forward: [{ to: 'app' }] } },
    });
    const running = server;
    const id = await send(running, 'a', '{"n":1}');
    await eventually(() => destination?.requests.length === 1);
    const [inFlight] = await forwardsOf(running, id);
    expect(inFlight?.status).toBe('delivering');
    const claimed = await api<{ code: string }>(running, '/api/destinations/app/claim', { method: 'POST', body: {} });
    expect(claimed).toMatchObject({ status: 409, json: { code: 'not_pull' } });
    for (const action of ['ack', 'nack']) {
      const answer = await api<{ code: string }>(running, `/api/forwards/${inFlight?.id ?? ''}/${action}`, {
        method: 'POST',
        body: { lease: 'any' },
      });
      expect(answer, action).toMatchObject({ status: 409, json: { code: 'not_pull' } });
    }
    expect(await forwardsOf(running, id)).toEqual([inFlight]);
  });
});

describe('a claim whose store fails (sqlite)', () => {
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers a problem document (500 internal_error), with nothing from inside', async () => {
    server = await startForwarding('sqlite', {
      destinations: { worker: { pull: true } },
      sources: { a: { forward: [{ to: 'worker' }] } },
    });
    await send(server, 'a', '{"n":1}');
    const { store } = server;
    if (!(store instanceof SqliteStore)) throw new Error('not the SQLite store');
    // The store's connection closed under the running app: every claim fails inside.
    store.db.close();
    const res = await fetch(`${server.url}/api/destinations/worker/claim`, {
      method: 'POST',
      headers: { ...server.auth, 'content-type': 'application/json' },
      body: '{}',
    });
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(text)).toMatchObject({ code: 'internal_error', status: 500 });
    expect(text).not.toMatch(/database|connection|not open|\n\s+at /i);
  });
});
