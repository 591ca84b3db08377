import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Static } from 'typebox';
import type { IssuePageSchema } from '../../src/issues/issue-schemas.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { expectFetchProblem, RFC3339_UTC_MS } from '../helpers/exchange.js';

type IssuePage = Static<typeof IssuePageSchema>;

/** GET /api/issues, POST /api/issues/{id}/resolve and reception_issues_open (docs/alerts.md), on the run's store. */
describe('issues through the API', () => {
  let server: RunningApp<InboxDatabase>;

  beforeAll(async () => {
    server = await startApp({ issueTracker: { flushMs: 5 } });
  });
  afterAll(async () => {
    await server.close();
  });

  async function page(query = ''): Promise<IssuePage> {
    const res = await fetch(`${server.url}/api/issues${query === '' ? '' : `?${query}`}`, { headers: server.auth });
    expect(res.status, query).toBe(200);
    return (await res.json()) as IssuePage;
  }

  const resolve = (id: string): Promise<Response> =>
    fetch(`${server.url}/api/issues/${encodeURIComponent(id)}/resolve`, { method: 'POST', headers: server.auth });

  it('lists issues newest first, by status, a page at a time; resolving is 204, again 204, unknown 404', async () => {
    expect(await page()).toEqual({ items: [], nextCursor: null });
    const issues = server.app.issues;
    for (let i = 0; i < 5; i++) {
      issues.occurred('dead_letters', `dest${i}`, `HTTP 500 <b>${i}</b>`);
      // Each its own write, so that each opens at its own millisecond.
      await issues.flush();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    issues.occurred('dead_letters', 'dest4', 'HTTP 502');
    await issues.flush();

    const all = await page();
    expect(all.items.map((i) => i.subject)).toEqual(['dest4', 'dest3', 'dest2', 'dest1', 'dest0']);
    const [newest] = all.items;
    expect(newest).toMatchObject({ kind: 'dead_letters', status: 'open', count: 2, lastError: 'HTTP 502', resolvedAt: null });
    expect(newest?.firstAt).toMatch(RFC3339_UTC_MS);
    expect(newest?.lastAt).toMatch(RFC3339_UTC_MS);

    const subjects: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const next: IssuePage = await page(`status=open&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      subjects.push(...next.items.map((i) => i.subject));
      cursor = next.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(subjects).toEqual(['dest4', 'dest3', 'dest2', 'dest1', 'dest0']);

    const id = all.items.find((i) => i.subject === 'dest1')?.id ?? '';
    expect((await resolve(id)).status).toBe(204);
    expect((await resolve(id)).status).toBe(204);
    await expectFetchProblem(await resolve('019ab2c4-0000-7000-8000-000000000000'), 'not_found');
    await expectFetchProblem(await resolve('%00'), 'not_found');
    const resolved = await page('status=resolved');
    expect(resolved.items.map((i) => i.subject)).toEqual(['dest1']);
    expect(resolved.items[0]?.resolvedAt).toMatch(RFC3339_UTC_MS);
    expect((await page('status=open')).items).toHaveLength(4);
    expect((await page('limit=100000000000000000000')).items).toHaveLength(5);
  });

  it('answers bad parameters with 400 invalid_query and no token with 401', async () => {
    for (const query of [
      'status=closed',
      'status=',
      'limit=0',
      'limit=-1',
      'limit=1e2',
      'limit=abc',
      'cursor=!',
      'cursor=czE',
      'cursor=aXg',
    ]) {
      await expectFetchProblem(await fetch(`${server.url}/api/issues?${query}`, { headers: server.auth }), 'invalid_query');
    }
    await expectFetchProblem(await fetch(`${server.url}/api/issues`), 'unauthorized');
    await expectFetchProblem(await fetch(`${server.url}/api/issues/x/resolve`, { method: 'POST' }), 'unauthorized');
  });

  it('reports reception_issues_open per kind from the store, every kind present', async () => {
    server.app.issues.occurred('destination_down', 'gone', 'connect ECONNREFUSED');
    await server.app.issues.flush();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const open = Object.fromEntries(
      [...text.matchAll(/^reception_issues_open\{kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
    );
    expect(open).toEqual({ destination_down: 1, dead_letters: 4, backlog: 0, verification_failing: 0, transform_failing: 0 });
    // What the store holds, not what this instance saw: an issue resolved behind its back is gone at the next scrape.
    const [issue] = await server.store.issues.list({ limit: 1, status: 'open' });
    await server.store.issues.resolveById(issue?.id ?? '', Date.now());
    const again = await (await fetch(`${server.url}/metrics`)).text();
    expect(again).toMatch(/^reception_issues_open\{kind="destination_down"\} 0$/m);
  });
});
