import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SqliteStore } from '../../src/inbox/sqlite-store.js';

import { newDeliveries, newDelivery } from '../helpers/delivery-factory.js';

import { API_TOKEN, childrenOf, timedExit } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** RECEPTION_RETENTION, end to end: the server prunes its own inbox, soon after start and then every minute. */
describe('RECEPTION_RETENTION', () => {
  it('deletes the deliveries older than the retention soon after start, keeps the newer ones, and logs how many', async (context) => {
    const children = childrenOf(context);
    const data = children.dataDir();
    const now = Date.now();
    const fresh = newDelivery({ source: 'kept', receivedAt: now - DAY_MS });
    const store = new SqliteStore({ file: join(data, 'reception.sqlite'), durability: 'full' });
    await store.append([...newDeliveries(5, { source: 'expired', receivedAt: now - 3 * DAY_MS }), fresh]);
    await store.close();

    const server = await children.start({ RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_RETENTION: '2d' });
    const pruned = (): boolean => server.logs.some((line) => line.includes('"retention pruned deliveries"'));
    await eventually(pruned, 10_000, `no pruning logged: ${server.logs.slice(-5).join('\n')}`);

    const res = await fetch(`${server.url}/api/sources`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
    expect(await res.json()).toEqual({
      items: [{ source: 'kept', count: 1, lastReceivedAt: new Date(fresh.receivedAt).toISOString() }],
      nextCursor: null,
    });
    const line = JSON.parse(server.logs.find((l) => l.includes('"retention pruned deliveries"')) ?? '{}') as { deleted?: number };
    expect(line.deleted).toBe(5);
    children.signal(server, 'SIGTERM');
    expect((await timedExit(server, 5000)).code).toBe(0);
  });
});
