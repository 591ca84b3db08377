import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { newDelivery } from '../helpers/delivery-factory.js';
import { deliver, readJson, type DeliveryPage } from '../helpers/exchange.js';

/** CONTRACT 3: `limit` at most 500; a larger one is capped, not refused. */
describe('GET /api/deliveries page size', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
    for (let batch = 0; batch < 6; batch++) {
      await server.store.append(Array.from({ length: 100 }, () => newDelivery({ source: 'many' })));
    }
  });
  afterAll(async () => {
    await server.close();
  });

  // Any number of digits: 16 and more were refused once, though the detail says a larger value is taken as 500.
  it.each(['500', '501', '100000', '1234567890123456', '9'.repeat(400)])(
    'answers limit=%s with 500 deliveries and a cursor to the rest',
    async (limit) => {
      const page = await readJson<DeliveryPage>(server, `/api/deliveries?limit=${limit}`);
      expect(page.items).toHaveLength(500);
      expect(page.nextCursor).not.toBeNull();
      const rest = await readJson<DeliveryPage>(server, `/api/deliveries?limit=${limit}&cursor=${page.nextCursor ?? ''}`);
      expect(rest.items).toHaveLength(100);
      expect(rest.nextCursor).toBeNull();
    },
  );

  it('takes a long limit that writes a small number with leading zeros as that number', async () => {
    const page = await readJson<DeliveryPage>(server, `/api/deliveries?limit=${'0'.repeat(30)}7`);
    expect(page.items).toHaveLength(7);
  });
});

/**
 * A page also ends once its bodies add up to 8 MiB (PAGE_BYTES): a body of
 * control bytes grows sixfold when serialized, and 50 bodies of 5 MiB
 * made a page longer than V8's longest string (500 internal_error) and
 * held every other request up for seconds while it was built.
 */
describe('GET /api/deliveries with large bodies', () => {
  let server: RunningApp;
  const ids: string[] = [];
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
    // 6 form bodies of 4 MiB of \x01 bytes, sent as senders send them: about 145 MiB once serialized together.
    const body = Buffer.concat([Buffer.from('a='), Buffer.alloc(4 * 1024 * 1024 - 2, 0x01)]);
    for (let i = 0; i < 6; i++) ids.push((await deliver(server, 'huge', body, 'application/x-www-form-urlencoded')).id);
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(['', '?source=huge'])(
    'answers every page (%s), two deliveries at most, and the cursors visit all of them once',
    async (query) => {
      const seen: string[] = [];
      let pages = 0;
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const separator = query === '' ? '?' : '&';
        const path: string = `/api/deliveries${query}${cursor === null ? '' : `${separator}cursor=${cursor}`}`;
        const current: DeliveryPage = await readJson<DeliveryPage>(server, path);
        expect(current.items.length).toBeLessThanOrEqual(2);
        // The last page is full to the byte cap; its cursor is null, not one that leads to an empty page.
        expect(current.items.length).toBeGreaterThan(0);
        pages += 1;
        expect(current.items.every((d) => (d.body as { a?: string }).a?.length === 4 * 1024 * 1024 - 2)).toBe(true);
        seen.push(...current.items.map((d) => d.id));
        cursor = current.nextCursor;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(seen).toEqual([...ids].reverse());
      expect(pages).toBe(3);
    },
    // Three pages of about 48 MiB of JSON each: a test of paging, not of speed, on a busy 2-core machine too.
    90_000,
  );

  it('still answers small deliveries 50 to a page after the large ones', async () => {
    await server.store.append(Array.from({ length: 60 }, () => newDelivery({ source: 'small' })));
    const page = await readJson<DeliveryPage>(server, '/api/deliveries');
    expect(page.items).toHaveLength(50);
    expect(page.nextCursor).not.toBeNull();
  });
});
