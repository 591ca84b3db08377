import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, readJson, type DeliveryPage, type Receipt } from '../helpers/exchange.js';

/** CONTRACT 3: walking the list with a cursor sees every delivery exactly once. */
describe('read API: pagination', () => {
  let server: RunningApp;
  // Relaxed durability: these tests read, they do not test power loss.
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Sends `count` deliveries to `source`, a few at a time, and answers their receipts. */
  async function fill(source: string, count: number): Promise<Receipt[]> {
    const receipts: Receipt[] = [];
    for (let i = 0; i < count; i += 10) {
      const batch = Array.from({ length: Math.min(10, count - i) }, (_, k) =>
        deliver(server, source, JSON.stringify({ n: i + k })),
      );
      receipts.push(...(await Promise.all(batch)));
    }
    return receipts;
  }

  /**
   * Walks every page with `limit`, calling `between` after each page, and
   * answers the ids in the order seen plus how many pages it took.
   */
  async function walk(
    query: string,
    limit: number,
    between: (page: number) => Promise<void> = async () => {},
  ): Promise<{ ids: string[]; seqs: number[]; pages: number }> {
    const ids: string[] = [];
    const seqs: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const params = new URLSearchParams(query);
      params.set('limit', String(limit));
      if (cursor !== null) params.set('cursor', cursor);
      const page: DeliveryPage = await readJson<DeliveryPage>(server, `/api/deliveries?${params.toString()}`);
      expect(page.items.length).toBeLessThanOrEqual(limit);
      if (page.nextCursor !== null) expect(page.items).toHaveLength(limit);
      ids.push(...page.items.map((d) => d.id));
      seqs.push(...page.items.map((d) => d.seq));
      cursor = page.nextCursor;
      pages++;
      expect(pages).toBeLessThan(1000);
      await between(pages);
    } while (cursor !== null);
    return { ids, seqs, pages };
  }

  function expectStrictlyDescending(seqs: number[]): void {
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeLessThan(seqs[i - 1] ?? -Infinity);
  }

  it('yields each of 130 deliveries exactly once, newest first, 7 at a time', async () => {
    const sent = await fill('walk', 130);
    const { ids, seqs, pages } = await walk('source=walk', 7);
    expect(pages).toBe(Math.ceil(130 / 7));
    expect(ids).toHaveLength(130);
    expect(new Set(ids).size).toBe(130);
    expect(new Set(ids)).toEqual(new Set(sent.map((r) => r.id)));
    expectStrictlyDescending(seqs);
    // No gaps: the walk equals one big page.
    const whole = await readJson<DeliveryPage>(server, '/api/deliveries?source=walk&limit=500');
    expect(ids).toEqual(whole.items.map((d) => d.id));
  });

  it('ends with nextCursor null when the last page is exactly full', async () => {
    await fill('exact', 14);
    const { ids, pages } = await walk('source=exact', 7);
    expect(ids).toHaveLength(14);
    // Two full pages; a third empty page is allowed only if the second had a cursor.
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(pages).toBeLessThanOrEqual(3);
  });

  it('is not disturbed by deliveries that arrive during the walk', async () => {
    const before = await fill('busy', 130);
    const arrived: Receipt[] = [];
    const { ids, seqs } = await walk('source=busy', 7, async () => {
      // Three new deliveries between every two pages, concurrently with the next page read too.
      arrived.push(...(await Promise.all([0, 1, 2].map((k) => deliver(server, 'busy', JSON.stringify({ late: k }))))));
    });
    expect(arrived.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(before.map((r) => r.id)));
    const late = new Set(arrived.map((r) => r.id));
    expect(ids.some((id) => late.has(id))).toBe(false);
    expectStrictlyDescending(seqs);
  });

  it('walks the whole inbox across sources while new deliveries race with page reads', async () => {
    const start = await readJson<DeliveryPage>(server, '/api/deliveries?limit=500');
    const known = new Set(start.items.map((d) => d.id));
    expect(start.nextCursor).toBeNull();
    const writes: Array<Promise<Receipt>> = [];
    const { ids, seqs } = await walk('', 7, async (page) => {
      // Do not wait: these commit while the next pages are being read.
      writes.push(deliver(server, page % 2 === 0 ? 'walk' : 'elsewhere', '{}'));
    });
    const late = new Set((await Promise.all(writes)).map((r) => r.id));
    expect(new Set(ids).size).toBe(ids.length);
    expectStrictlyDescending(seqs);
    // Everything that was there at the start is seen exactly once.
    for (const id of known) expect(ids).toContain(id);
    // Every racing delivery started after the first page: none may show up in the walk.
    expect(late.size).toBe(writes.length);
    expect(ids.filter((id) => late.has(id))).toEqual([]);
    expect(ids).toHaveLength(known.size);
  });

  it('walks a filtered list the same way', async () => {
    await fill('sparse', 20);
    await fill('dense', 50);
    const { ids } = await walk('source=sparse', 3);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
    const sparse = await readJson<DeliveryPage>(server, '/api/deliveries?source=sparse&limit=500');
    expect(ids).toEqual(sparse.items.map((d) => d.id));
  });

  it('keeps a walk whole when deliveries it has not reached yet are deleted', async () => {
    await fill('shrinking', 30);
    const whole = await readJson<DeliveryPage>(server, '/api/deliveries?source=shrinking&limit=500');
    const doomed = new Set(whole.items.filter((_, i) => i % 5 === 4).map((d) => d.id));
    const { ids } = await walk('source=shrinking', 4, async (page) => {
      if (page !== 1) return;
      for (const id of doomed) {
        const res = await fetch(`${server.url}/api/deliveries/${id}`, { method: 'DELETE', headers: server.auth });
        expect(res.status).toBe(204);
      }
    });
    const expected = whole.items.map((d) => d.id).filter((id, i) => i < 4 || !doomed.has(id));
    expect(ids).toEqual(expected);
  });
});
