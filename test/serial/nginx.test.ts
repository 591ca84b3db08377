import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { requireNginx, startNginx, templateNginxConf, type RunningNginx } from '../helpers/nginx.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { connectSse } from '../helpers/sse.js';
import { postWebhook } from '../helpers/webhook-load.js';
import { API_TOKEN, ServerChildren } from '../helpers/server-children.js';

/**
 * docs/nginx.conf, run by real nginx in front of two Reception instances on
 * one PostgreSQL inbox: deliveries sent through it land (on both
 * instances), the stored address is the client's (RECEPTION_TRUSTED_PROXIES
 * names nginx), bodies up to Reception's limit pass and larger ones get
 * 413, and a stream opened through nginx carries, at once,
 * deliveries received by either instance.
 */

const SUITE = 'the nginx example test (test/serial/nginx.test.ts)';
const nginx = requireNginx(SUITE);
const run = nginx !== undefined && (await requirePostgres(SUITE));
const EXAMPLE = new URL('../../docs/nginx.conf', import.meta.url);
const auth = { authorization: `Bearer ${API_TOKEN}` };

describe.runIf(run)('docs/nginx.conf in front of two instances', () => {
  const children = new ServerChildren();
  const schema = freshSchema();
  let instances: ServerProcess[] = [];
  let proxy: RunningNginx | undefined;
  const viaNginx = (): string => proxy?.url ?? '';

  beforeAll(async () => {
    instances = await Promise.all(
      [0, 1].map(() =>
        children.start({
          RECEPTION_DATABASE_URL: testDatabaseUrl(),
          RECEPTION_DATABASE_SCHEMA: schema,
          RECEPTION_DATABASE_POOL: '4',
          RECEPTION_DATA: children.dataDir(),
          RECEPTION_TOKEN: API_TOKEN,
          RECEPTION_TRUSTED_PROXIES: '127.0.0.1',
        }),
      ),
    );
    const port = await freePort();
    const site = templateNginxConf(
      readFileSync(EXAMPLE, 'utf8'),
      port,
      instances.map((instance) => new URL(instance.url).host),
    );
    proxy = await startNginx(nginx ?? 'nginx', children.dataDir(), site, port);
  }, 60_000);

  afterAll(async () => {
    await proxy?.stop();
    await children.cleanup();
    await dropSchema(schema);
  }, 60_000);

  it('passes POSTs to both instances, and every one lands', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postWebhook(viaNginx(), 'through-nginx', Buffer.from(JSON.stringify({ i })))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const ids = answers.map((answer) => (JSON.parse(answer.text) as { id: string }).id);
    for (const [i, id] of ids.entries()) {
      const res = await fetch(`${viaNginx()}/api/deliveries/${id}`, { headers: auth });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { body: unknown }).body).toEqual({ i });
    }
    // Round-robin: each instance received some of them (its log names the ids it stored).
    for (const instance of instances) {
      expect(ids.filter((id) => instance.logs.some((line) => line.includes(`"id":"${id}"`))).length).toBeGreaterThan(0);
    }
  });

  it("stores the client's address, not nginx's, and ignores an address the client made up", async () => {
    const answer = await postWebhook(viaNginx(), 'address', Buffer.from('{"who":"me"}'), {
      localAddress: '127.0.0.2',
      headers: { 'x-forwarded-for': '198.51.100.23' },
    });
    expect(answer.status).toBe(200);
    const { id } = JSON.parse(answer.text) as { id: string };
    const stored = (await (await fetch(`${viaNginx()}/api/deliveries/${id}`, { headers: auth })).json()) as {
      remoteAddress: string;
      headers: Array<[string, string]>;
    };
    expect(stored.remoteAddress).toBe('127.0.0.2');
    const forwarded = stored.headers.find(([name]) => name.toLowerCase() === 'x-forwarded-for');
    expect(forwarded?.[1]).toBe('198.51.100.23, 127.0.0.2');
  });

  it("lets a body of exactly 5 MiB through (Reception's limit), and answers a larger one 413", async () => {
    const sized = (bytes: number): Buffer => {
      const head = '{"pad":"';
      return Buffer.from(`${head}${'a'.repeat(bytes - head.length - 2)}"}`);
    };
    const limit = 5 * 1024 * 1024;
    const fits = await postWebhook(viaNginx(), 'large', sized(limit));
    expect(fits.status).toBe(200);
    const { id } = JSON.parse(fits.text) as { id: string };
    const stored = (await (await fetch(`${viaNginx()}/api/deliveries/${id}`, { headers: auth })).json()) as { size: number };
    expect(stored.size).toBe(limit);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await postWebhook(viaNginx(), 'large', sized(limit + 1))).status).toBe(413);
    }
  });

  it('streams, through nginx and at once, deliveries received by either instance', async () => {
    const stream = await connectSse(`${viaNginx()}/api/stream`, auth);
    try {
      expect(stream.status).toBe(200);
      expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
      const sentIds: string[] = [];
      // Straight to each instance in turn, bypassing nginx; each event must come through before the next is sent.
      for (const [n, instance] of [...instances, ...instances].entries()) {
        const answer = await postWebhook(instance.url, 'live', Buffer.from(JSON.stringify({ n })));
        expect(answer.status).toBe(200);
        sentIds.push((JSON.parse(answer.text) as { id: string }).id);
        await stream.waitForEvents(n + 1, 15_000);
      }
      expect(stream.events.map((event) => (JSON.parse(event.data) as { id: string }).id)).toEqual(sentIds);
    } finally {
      stream.close();
    }
  });
});
