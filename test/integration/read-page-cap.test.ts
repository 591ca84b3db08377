import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { newDelivery } from '../store/delivery-factory.js';
import { readJson, type DeliveryPage } from './exchange.js';

/** CONTRACT 3: `limit` at most 500; a larger one is capped, not refused. */
describe('GET /api/deliveries page size', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
    for (let batch = 0; batch < 6; batch++) {
      await server.store.append(Array.from({ length: 100 }, () => newDelivery({ source: 'many' })));
    }
  });
  afterAll(async () => { await server.close(); });

  it.each(['500', '501', '100000'])('answers limit=%s with 500 deliveries and a cursor to the rest', async (limit) => {
    const page = await readJson<DeliveryPage>(server, `/api/deliveries?limit=${limit}`);
    expect(page.items).toHaveLength(500);
    expect(page.nextCursor).not.toBeNull();
    const rest = await readJson<DeliveryPage>(server, `/api/deliveries?limit=${limit}&cursor=${page.nextCursor ?? ''}`);
    expect(rest.items).toHaveLength(100);
    expect(rest.nextCursor).toBeNull();
  });
});
