import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Static } from 'typebox';
import type { TrafficSchema } from '../../src/api/traffic-schemas.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { testStoreKind, type RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { expectFetchProblem, RFC3339_UTC_MS } from '../helpers/exchange.js';
import { api, send, startForwarding } from '../helpers/forwarding-app.js';

type Traffic = Static<typeof TrafficSchema>;
interface SourcesWithTraffic {
  items: Array<{
    source: string;
    count: number;
    traffic?: { from: string; bucketSeconds: number; delivered: number[]; refused: number[] };
  }>;
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** GET /api/sources/{source}/traffic and GET /api/sources?traffic=24h (README, "A picture of the traffic"). */
describe('traffic counts through the API', () => {
  let server: RunningApp<InboxDatabase>;
  let destination: DestinationServer;

  beforeAll(async () => {
    destination = new DestinationServer();
    // The first attempt fails, every other succeeds.
    destination.answer = (_request, n) => ({ status: n === 1 ? 500 : 204 });
    await destination.listen();
    server = await startForwarding(
      testStoreKind(),
      {
        destinations: { app: { url: destination.url, allowPrivateNetwork: true, retry: { initialMs: 20, maxMs: 50 } } },
        sources: { shop: { forward: [{ to: 'app' }] } },
      },
      { refusalWriter: { intervalMs: 10 } },
    );
    await send(server, 'shop', '{"n":1}');
    await send(server, 'shop', '{"n":2}');
    await send(server, 'other', '{"n":3}');
    // Refused: not JSON, and not an object.
    for (const body of ['nope', '[1]']) {
      const res = await fetch(`${server.url}/api/webhook/shop`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
  });
  afterAll(async () => {
    await server.close();
    await destination.close();
  });

  const get = (path: string): Promise<Response> => fetch(`${server.url}${path}`, { headers: server.auth });

  it("answers a source's deliveries, refusals and forward outcomes per minute, the last bucket now", async () => {
    const read = async (): Promise<Traffic> => {
      const { status, json } = await api<Traffic>(server, '/api/sources/shop/traffic?range=1h&bucket=minute');
      expect(status).toBe(200);
      return json;
    };
    // The refusal writer and the forwarder write their counts soon after, not with the answer.
    await eventually(async () => {
      const json = await read();
      return sum(json.forwarded) === 2 && sum(json.refused) === 2;
    });
    const traffic = await read();
    expect(sum(traffic.forwarded)).toBe(2);
    expect(sum(traffic.refused)).toBe(2);
    expect(traffic.source).toBe('shop');
    expect(traffic.bucket).toBe('minute');
    expect(traffic.bucketSeconds).toBe(60);
    expect(traffic.from).toMatch(RFC3339_UTC_MS);
    expect(Date.parse(traffic.to) - Date.parse(traffic.from)).toBe(60 * 60_000);
    expect(Date.parse(traffic.to)).toBeGreaterThan(Date.now() - 1000);
    for (const series of [traffic.delivered, traffic.refused, traffic.forwarded, traffic.forwardFailed, traffic.dead]) {
      expect(series).toHaveLength(60);
    }
    expect(sum(traffic.delivered)).toBe(2);
    expect(sum(traffic.forwardFailed)).toBe(1);
    expect(sum(traffic.dead)).toBe(0);
    // Everything happened in the last minute or two.
    expect(sum(traffic.delivered.slice(-2))).toBe(2);
  });

  it('answers hours by default (24 of them), summed from the minutes', async () => {
    const { status, json } = await api<Traffic>(server, '/api/sources/shop/traffic');
    expect(status).toBe(200);
    expect(json.bucket).toBe('hour');
    expect(json.delivered).toHaveLength(24);
    expect(sum(json.delivered)).toBe(2);
    expect(sum(json.delivered.slice(-2))).toBe(2);
  });

  it('answers zeros for a source that has no traffic, and keeps sources apart', async () => {
    const none = await api<Traffic>(server, `/api/sources/${encodeURIComponent('nobody ü')}/traffic?range=6h&bucket=hour`);
    expect(none.status).toBe(200);
    expect(none.json.source).toBe('nobody ü');
    expect(none.json.delivered).toEqual([0, 0, 0, 0, 0, 0]);
    const other = await api<Traffic>(server, '/api/sources/other/traffic?range=1h&bucket=hour');
    expect(other.json.delivered).toEqual([1]);
    expect(other.json.refused).toEqual([0]);
  });

  it('adds the 24-hour sparklines to the sources list when asked (traffic=24h), and only then', async () => {
    const read = async (): Promise<SourcesWithTraffic> =>
      (await api<SourcesWithTraffic>(server, '/api/sources?traffic=24h')).json;
    await eventually(async () => sum((await read()).items.find((s) => s.source === 'shop')?.traffic?.refused ?? []) === 2);
    const withTraffic = await read();
    expect(sum(withTraffic.items.find((s) => s.source === 'shop')?.traffic?.refused ?? [])).toBe(2);
    const shop = withTraffic.items.find((s) => s.source === 'shop');
    expect(shop?.traffic?.bucketSeconds).toBe(3600);
    expect(shop?.traffic?.delivered).toHaveLength(24);
    expect(sum(shop?.traffic?.delivered ?? [])).toBe(2);
    expect(shop?.traffic?.delivered.at(-1) ?? 0).toBeGreaterThanOrEqual(0);
    const plain = await api<SourcesWithTraffic>(server, '/api/sources');
    expect(plain.json.items.every((s) => s.traffic === undefined)).toBe(true);
  });

  it('answers 400 invalid_query for a bad range, bucket or traffic value, and 404 for a name no source could have', async () => {
    await expectFetchProblem(await get('/api/sources/shop/traffic?range=7d'), 'invalid_query');
    await expectFetchProblem(await get('/api/sources/shop/traffic?range='), 'invalid_query');
    await expectFetchProblem(await get('/api/sources/shop/traffic?bucket=second'), 'invalid_query');
    await expectFetchProblem(await get('/api/sources/shop/traffic?bucket=MINUTE'), 'invalid_query');
    await expectFetchProblem(await get('/api/sources?traffic=1h'), 'invalid_query');
    await expectFetchProblem(await get(`/api/sources/${'x'.repeat(129)}/traffic`), 'not_found');
    await expectFetchProblem(await get('/api/sources/%01/traffic'), 'not_found');
    await expectFetchProblem(await get('/api/sources/../traffic'), 'not_found');
    const anonymous = await fetch(`${server.url}/api/sources/shop/traffic`);
    await expectFetchProblem(anonymous, 'unauthorized');
  });
});
