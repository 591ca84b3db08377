import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import {
  deliver,
  expectFetchProblem,
  readDelivery,
  readJson,
  RFC3339_UTC_MS,
  type DeliveryPage,
  type Receipt,
  type SourcePage,
  type SourceView,
} from '../helpers/exchange.js';

/** CONTRACT 3: listing, getting, deleting and the sources summary. */
describe('read API', () => {
  let server: RunningApp;
  /** 60 deliveries to "list", oldest first. */
  const sent: Receipt[] = [];
  beforeAll(async () => {
    // Relaxed durability: these tests read, they do not test power loss.
    server = await startApp({ durability: 'relaxed' });
    for (let i = 0; i < 60; i++) sent.push(await deliver(server, 'list', `{"i":${i}}`));
  });
  afterAll(async () => {
    await server.close();
  });

  function get(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${server.url}${path}`, { ...init, headers: server.auth });
  }

  describe('GET /api/deliveries', () => {
    it('lists newest first with a default limit of 50 and a cursor for more', async () => {
      const res = await get('/api/deliveries');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const page = (await res.json()) as DeliveryPage;
      expect(Object.keys(page).sort()).toEqual(['items', 'nextCursor']);
      expect(page.items).toHaveLength(50);
      const newestFirst = [...sent]
        .reverse()
        .slice(0, 50)
        .map((r) => r.id);
      expect(page.items.map((d) => d.id)).toEqual(newestFirst);
      for (let i = 1; i < page.items.length; i++) {
        expect(page.items[i]?.seq).toBeLessThan(page.items[i - 1]?.seq ?? -Infinity);
      }
      expect(typeof page.nextCursor).toBe('string');
    });

    it('carries whole deliveries in the list', async () => {
      const page = await readJson<DeliveryPage>(server, '/api/deliveries?limit=1');
      const [first] = page.items;
      expect(first).toBeDefined();
      expect(first).toEqual(await readDelivery(server, first?.id ?? ''));
      expect(first?.body).toEqual({ i: 59 });
    });

    it('gives the rest after the cursor and null when there is no more', async () => {
      const first = await readJson<DeliveryPage>(server, '/api/deliveries');
      const rest = await readJson<DeliveryPage>(server, `/api/deliveries?cursor=${encodeURIComponent(first.nextCursor ?? '')}`);
      expect(rest.items.map((d) => d.id)).toEqual(
        [...sent]
          .reverse()
          .slice(50)
          .map((r) => r.id),
      );
      expect(rest.nextCursor).toBeNull();
    });

    it('answers nextCursor null when the page holds exactly the rest', async () => {
      const page = await readJson<DeliveryPage>(server, '/api/deliveries?limit=60');
      expect(page.items).toHaveLength(60);
      expect(page.nextCursor).toBeNull();
    });

    it('accepts limit 1 and limit 500', async () => {
      expect((await readJson<DeliveryPage>(server, '/api/deliveries?limit=1')).items).toHaveLength(1);
      const all = await readJson<DeliveryPage>(server, '/api/deliveries?limit=500');
      expect(all.items.length).toBeGreaterThanOrEqual(60);
      expect(all.nextCursor).toBeNull();
    });

    it.each(['0', '-1', 'abc', '1.5', '', '0x10', '0b11', '1e2', '%2B5', '%205', '3%0A', '1.0', 'Infinity', 'true'])(
      'refuses limit=%j with 400 invalid_query',
      async (limit) => {
        const res = await get(`/api/deliveries?limit=${limit}`);
        const { detail } = (await res.clone().json()) as { detail: string };
        expect(detail).toBe(
          'The query parameter "limit" is not valid: Deliveries per page: a whole number from 1, in digits (50 when absent); a value above 500 is taken as 500.',
        );
        await expectFetchProblem(res, 'invalid_query');
      },
    );

    it('takes limit with leading zeros as the number it writes', async () => {
      expect((await readJson<DeliveryPage>(server, '/api/deliveries?limit=007')).items).toHaveLength(7);
    });

    it.each([
      ['empty', ''],
      ['"."', '.'],
      ['".."', '..'],
      ['a "/"', 'a%2Fb'],
      ['a control character', '%00x'],
      ['over 128 characters', 'a'.repeat(129)],
    ])('refuses a source filter that no source could have (%s) with 400 invalid_query', async (_name, source) => {
      await expectFetchProblem(await get(`/api/deliveries?source=${source}`), 'invalid_query');
    });

    it.each([
      ['garbage', 'not-a-cursor'],
      ['base64url of something else', Buffer.from('hello').toString('base64url')],
      ['a negative position', Buffer.from('s-1').toString('base64url')],
      ['characters outside base64url', '%2B%2F%3D'],
      ['empty', ''],
      ['too long', 'A'.repeat(200)],
    ])('refuses a bad cursor (%s) with 400 invalid_query', async (_name, cursor) => {
      await expectFetchProblem(await get(`/api/deliveries?cursor=${cursor}`), 'invalid_query');
    });

    it('filters by source, newest first, across pages', async () => {
      const others: Receipt[] = [];
      for (let i = 0; i < 5; i++) {
        others.push(await deliver(server, 'filtered', `{"j":${i}}`));
        await deliver(server, 'noise', '{}');
      }
      const first = await readJson<DeliveryPage>(server, '/api/deliveries?source=filtered&limit=3');
      expect(first.items.map((d) => d.source)).toEqual(['filtered', 'filtered', 'filtered']);
      const second = await readJson<DeliveryPage>(
        server,
        `/api/deliveries?source=filtered&limit=3&cursor=${first.nextCursor ?? ''}`,
      );
      expect(second.nextCursor).toBeNull();
      expect([...first.items, ...second.items].map((d) => d.id)).toEqual(others.reverse().map((r) => r.id));
    });

    it('filters by a Unicode source name', async () => {
      const { id } = await deliver(server, 'Zoë 😀', '{}');
      const page = await readJson<DeliveryPage>(server, `/api/deliveries?source=${encodeURIComponent('Zoë 😀')}`);
      expect(page.items.map((d) => d.id)).toEqual([id]);
    });

    it('answers an empty page for a source with no deliveries', async () => {
      const page = await readJson<DeliveryPage>(server, '/api/deliveries?source=never-used');
      expect(page).toEqual({ items: [], nextCursor: null });
    });
  });

  describe('GET /api/deliveries/{id}', () => {
    it('answers one delivery with every field of the contract', async () => {
      const receipt = sent[0];
      const delivery = await readDelivery(server, receipt?.id ?? '');
      expect(Object.keys(delivery).sort()).toEqual([
        'body',
        'contentType',
        'eventType',
        'forwards',
        'headers',
        'id',
        'method',
        'query',
        'receivedAt',
        'remoteAddress',
        'seq',
        'size',
        'source',
        'verification',
      ]);
      expect(delivery.id).toBe(receipt?.id);
      expect(delivery.receivedAt).toBe(receipt?.receivedAt);
      expect(delivery.receivedAt).toMatch(RFC3339_UTC_MS);
      expect(delivery.forwards).toEqual([]);
      expect(delivery.eventType).toBeNull();
    });

    it.each([
      ['an unknown id', 'no-such-delivery'],
      ['a UUID never handed out', '00000000-0000-4000-8000-000000000000'],
      ['an id with odd characters', encodeURIComponent('../../etc/passwd')],
    ])('answers %s with 404 not_found', async (_name, id) => {
      await expectFetchProblem(await get(`/api/deliveries/${id}`), 'not_found');
      await expectFetchProblem(await get(`/api/deliveries/${id}/raw`), 'not_found');
    });
  });

  describe('GET /api/deliveries/{seq}: the short form the page shows', () => {
    it('answers the delivery with that seq, its raw bytes, and deletes by it', async () => {
      const first = await readDelivery(server, sent[0]?.id ?? '');
      const third = await readDelivery(server, sent[2]?.id ?? '');
      const bySeq = (await (await get(`/api/deliveries/${third.seq}`)).json()) as { id: string; seq: number };
      expect(bySeq.id).toBe(third.id);
      expect(bySeq.seq).toBe(third.seq);
      const raw = await get(`/api/deliveries/${first.seq}/raw`);
      expect(raw.status).toBe(200);
      expect(await raw.text()).toBe('{"i":0}');

      const doomed = await deliver(server, 'deleting-by-seq', '{"bye":1}');
      const { seq } = await readDelivery(server, doomed.id);
      expect((await get(`/api/deliveries/${seq}`, { method: 'DELETE' })).status).toBe(204);
      await expectFetchProblem(await get(`/api/deliveries/${doomed.id}`), 'not_found');
      // Its seq now names nothing: not the delivery below it.
      await expectFetchProblem(await get(`/api/deliveries/${seq}`), 'not_found');
      await expectFetchProblem(await get(`/api/deliveries/${seq}`, { method: 'DELETE' }), 'not_found');
    });

    it.each([
      ['a seq past the newest', '999999999999'],
      ['a seq with a leading zero', `0${1}`],
      ['zero', '0'],
      ['a seq too long to be exact', '12345678901234567890'],
    ])('answers %s with 404 not_found', async (_name, ref) => {
      await expectFetchProblem(await get(`/api/deliveries/${ref}`), 'not_found');
      await expectFetchProblem(await get(`/api/deliveries/${ref}/raw`), 'not_found');
    });
  });

  describe('DELETE /api/deliveries/{id}', () => {
    it('deletes with 204, then get, raw and delete answer 404', async () => {
      const { id } = await deliver(server, 'deleting', '{"bye":true}');
      const res = await get(`/api/deliveries/${id}`, { method: 'DELETE' });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      await expectFetchProblem(await get(`/api/deliveries/${id}`), 'not_found');
      await expectFetchProblem(await get(`/api/deliveries/${id}/raw`), 'not_found');
      await expectFetchProblem(await get(`/api/deliveries/${id}`, { method: 'DELETE' }), 'not_found');
      const page = await readJson<DeliveryPage>(server, '/api/deliveries?source=deleting');
      expect(page.items.map((d) => d.id)).not.toContain(id);
    });

    it('answers 404 for an id that never existed', async () => {
      await expectFetchProblem(await get('/api/deliveries/never-existed', { method: 'DELETE' }), 'not_found');
    });

    it('deletes only the one delivery', async () => {
      const a = await deliver(server, 'deleting-one', '{"a":1}');
      const b = await deliver(server, 'deleting-one', '{"b":1}');
      expect((await get(`/api/deliveries/${a.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await readDelivery(server, b.id)).body).toEqual({ b: 1 });
    });
  });

  describe('GET /api/sources', () => {
    async function sources(): Promise<Map<string, SourceView>> {
      const body = await readJson<SourcePage>(server, '/api/sources');
      expect(Object.keys(body)).toEqual(['items', 'nextCursor']);
      expect(body.nextCursor).toBeNull();
      return new Map(body.items.map((s) => [s.source, s]));
    }

    it('counts each source and tells when it last received', async () => {
      const first = await deliver(server, 'counted', '{}');
      const second = await deliver(server, 'counted', '{}');
      const third = await deliver(server, 'counted', '{}');
      const counted = (await sources()).get('counted');
      expect(counted).toEqual({ source: 'counted', count: 3, lastReceivedAt: third.receivedAt });
      expect(counted?.lastReceivedAt).toMatch(RFC3339_UTC_MS);
      expect((await sources()).get('list')?.count).toBe(60);

      expect((await get(`/api/deliveries/${third.id}`, { method: 'DELETE' })).status).toBe(204);
      const afterOne = (await sources()).get('counted');
      expect(afterOne?.count).toBe(2);
      expect(Date.parse(afterOne?.lastReceivedAt ?? '')).toBeLessThanOrEqual(Date.parse(third.receivedAt));
      expect(Date.parse(afterOne?.lastReceivedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(second.receivedAt));

      expect((await get(`/api/deliveries/${first.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await sources()).get('counted')?.count).toBe(1);
      expect((await get(`/api/deliveries/${second.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await sources()).get('counted')?.count ?? 0).toBe(0);
    });

    it('agrees with the list for every source', async () => {
      for (const [source, summary] of await sources()) {
        const page = await readJson<DeliveryPage>(server, `/api/deliveries?limit=500&source=${encodeURIComponent(source)}`);
        expect(page.items).toHaveLength(summary.count);
        expect(page.items[0]?.receivedAt).toBe(summary.lastReceivedAt);
      }
    });
  });
});
