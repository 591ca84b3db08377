import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { ApiClient } from '../../src/cli/api-client.js';
import { newDelivery } from '../helpers/delivery-factory.js';
import { allSources, deliver, expectFetchProblem, readJson, type SourcePage } from '../helpers/exchange.js';

/** GET /api/sources a page at a time (issue 16: 50,000 sources made one answer of 8.9 MB). */
describe('read API: sources, a page at a time', () => {
  let server: RunningApp;
  /** Every source name, in code point order (`%05d`: ASCII, so plain sort is that order). */
  const names = Array.from({ length: 1234 }, (_, i) => `src-${String(i).padStart(5, '0')}`);
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
    // Straight into the server's real store, many per transaction: POSTing 1,234 webhooks would only take longer.
    for (let i = 0; i < names.length; i += 200) {
      await server.store.append(
        names
          .slice(i, i + 200)
          .reverse()
          .map((source) => newDelivery({ source, receivedAt: Date.UTC(2026, 0, 1) })),
      );
    }
  });
  afterAll(async () => {
    await server.close();
  });

  const get = (path: string): Promise<Response> => fetch(`${server.url}${path}`, { headers: server.auth });

  it('answers the first 100 by name, and a cursor, when no limit is given', async () => {
    const res = await get('/api/sources');
    expect(res.status).toBe(200);
    const text = await res.text();
    const page = JSON.parse(text) as SourcePage;
    expect(Object.keys(page)).toEqual(['items', 'nextCursor']);
    expect(page.items.map((s) => s.source)).toEqual(names.slice(0, 100));
    expect(page.items[0]).toEqual({ source: 'src-00000', count: 1, lastReceivedAt: '2026-01-01T00:00:00.000Z' });
    expect(page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(text.length).toBeLessThan(10_000);
  });

  it('walks every source once, in order, with the cursor; the last page says null', async () => {
    for (const limit of [1000, 7]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = `limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
        const page: SourcePage = await readJson<SourcePage>(server, `/api/sources?${query}`);
        expect(page.items.length).toBeLessThanOrEqual(Math.min(limit, 500));
        if (page.nextCursor !== null) expect(page.items.length).toBe(Math.min(limit, 500));
        seen.push(...page.items.map((s) => s.source));
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== null);
      expect(seen).toEqual(names);
      // 1000 is taken as 500: 3 pages; 7 a page: 177 pages, the last one of 2 (no empty page at the end).
      expect(pages).toBe(limit === 1000 ? 3 : 177);
    }
  });

  it('searches names with q, ignoring case, and pages through the matches', async () => {
    await deliver(server, 'Stripe-Live', '{}');
    await deliver(server, 'stripe-test', '{}');
    await deliver(server, 'ѕtripe', '{}');
    const found = await readJson<SourcePage>(server, `/api/sources?q=${encodeURIComponent('STRIPE')}`);
    expect(found.items.map((s) => s.source)).toEqual(['Stripe-Live', 'stripe-test']);
    expect(found.nextCursor).toBeNull();
    expect(
      (await readJson<SourcePage>(server, `/api/sources?q=${encodeURIComponent('ѕtrip')}`)).items.map((s) => s.source),
    ).toEqual(['ѕtripe']);
    const first = await readJson<SourcePage>(server, '/api/sources?q=01&limit=2');
    expect(first.items.map((s) => s.source)).toEqual(['src-00001', 'src-00010']);
    const second = await readJson<SourcePage>(server, `/api/sources?q=01&limit=2&cursor=${first.nextCursor ?? ''}`);
    expect(second.items.map((s) => s.source)).toEqual(['src-00011', 'src-00012']);
    expect((await allSources(server, 'q=01')).length).toBe(names.filter((n) => n.includes('01')).length);
    // An empty q is no search; a q of 128 characters is taken.
    expect((await readJson<SourcePage>(server, '/api/sources?q=&limit=1')).items.map((s) => s.source)).toEqual(['Stripe-Live']);
    expect((await readJson<SourcePage>(server, `/api/sources?q=${'x'.repeat(128)}`)).items).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1e2', 'limit'],
    ['cursor=%21%21', 'cursor'],
    // A deliveries cursor is not a sources cursor.
    [`cursor=${Buffer.from('s42').toString('base64url')}`, 'cursor'],
    // Base64url of "n" with a byte that is not UTF-8.
    [`cursor=${Buffer.from([0x6e, 0xff]).toString('base64url')}`, 'cursor'],
    [`q=${'x'.repeat(129)}`, 'q'],
  ])('refuses %s with 400 invalid_query', async (query, name) => {
    const res = await get(`/api/sources?${query}`);
    const { detail } = (await res.clone().json()) as { detail: string };
    await expectFetchProblem(res, 'invalid_query');
    expect(detail).toContain(
      name === 'cursor' && !query.includes('%21') ? 'cursor is not one this server handed out' : `"${name}"`,
    );
  });

  it("lets the command line count every delivery across the pages (export's progress total)", async () => {
    const api = new ApiClient({ base: server.url, token: server.token });
    const everyPage = (await allSources(server)).reduce((sum, s) => sum + s.count, 0);
    expect(everyPage).toBeGreaterThan(1000);
    expect(await api.deliveryCount()).toBe(everyPage);
    expect(await api.deliveryCount('src-01233')).toBe(1);
    expect(await api.deliveryCount('src-0123')).toBe(0);
  });

  it('is described in the OpenAPI document: limit, cursor, q and nextCursor', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          get: {
            parameters: Array<{ name: string; in: string }>;
            responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }>;
          };
        }
      >;
    };
    const operation = doc.paths['/api/sources']?.get;
    expect(operation?.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual([
      'query:cursor',
      'query:limit',
      'query:q',
      'query:traffic',
    ]);
    expect(Object.keys(operation?.responses['200']?.content['application/json']?.schema.properties ?? {})).toEqual([
      'items',
      'nextCursor',
    ]);
  });
});
