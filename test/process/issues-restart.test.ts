import { afterEach, describe, expect, it } from 'vitest';
import { DestinationServer } from '../helpers/destination-server.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { apiCall, forwardsIn, loopbackDestination, sendSome, writeConfig } from '../helpers/forwarding-process.js';
import { API_TOKEN, ServerChildren, timedExit } from '../helpers/server-children.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Issues are stored like deliveries (CONTRACT 11, docs/alerts.md): a real
 * server process opens `dead_letters`, counts a second dead letter and is
 * stopped with SIGTERM right after it (the count gathered but perhaps not
 * yet written is written before the store closes); after a restart the same
 * issue is open with both counted, and the next dead letter counts on it.
 * On SQLite and on PostgreSQL.
 */

interface IssueItem {
  id: string;
  kind: string;
  subject: string;
  status: string;
  count: number;
  lastError: string | null;
}

const children = new ServerChildren();
let shop: DestinationServer | undefined;
const schemas: string[] = [];
afterEach(async () => {
  await children.cleanup();
  await shop?.close();
  shop = undefined;
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

const onPostgres = await requirePostgres('the PostgreSQL case of test/process/issues-restart.test.ts');

function storeEnv(kind: 'sqlite' | 'postgres'): Record<string, string> {
  if (kind === 'sqlite') return {};
  const schema = freshSchema();
  schemas.push(schema);
  return { RECEPTION_DATABASE_URL: testDatabaseUrl(), RECEPTION_DATABASE_SCHEMA: schema };
}

async function openIssues(server: ServerProcess): Promise<IssueItem[]> {
  const { status, json } = await apiCall<{ items: IssueItem[] }>(server, '/api/issues?status=open');
  expect(status).toBe(200);
  return json.items;
}

describe('issues across a restart', { timeout: 60_000 }, () => {
  it.for(['sqlite', 'postgres'] as const)(
    '%s: an open issue and its count survive SIGTERM and a restart',
    async (kind, { skip }) => {
      if (kind === 'postgres' && !onPostgres) skip();
      shop = new DestinationServer();
      shop.answer = () => ({ status: 500, body: 'down' });
      await shop.listen();
      const data = children.dataDir();
      const file = writeConfig(data, {
        destinations: { shop: loopbackDestination(shop.port, { retry: { attempts: 1 } }) },
        sources: { orders: { forward: [{ to: 'shop' }] } },
      });
      const env = { RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: file, ...storeEnv(kind) };

      const first = await children.start(env);
      await sendSome(first, 'orders', 1, 'first');
      await eventually(async () => (await openIssues(first)).some((i) => i.count === 1), 10_000, 'no dead_letters issue');
      const [opened] = await openIssues(first);
      expect(opened).toMatchObject({ kind: 'dead_letters', subject: 'shop', status: 'open', count: 1 });
      await sendSome(first, 'orders', 1, 'second');
      await eventually(async () => (await forwardsIn(first, 'failed')).length === 2, 10_000, 'the second forward did not fail');
      children.signal(first, 'SIGTERM');
      expect((await timedExit(first, 15_000)).code).toBe(0);

      const second = await children.start(env);
      expect(await openIssues(second)).toEqual([expect.objectContaining({ id: opened?.id, kind: 'dead_letters', count: 2 })]);
      await sendSome(second, 'orders', 1, 'third');
      await eventually(
        async () => (await openIssues(second))[0]?.count === 3,
        10_000,
        'the third dead letter was not counted on it',
      );
      expect((await openIssues(second)).map((i) => i.id)).toEqual([opened?.id]);
    },
  );

  it('sqlite: a forward whose attempt a SIGKILL cut, with its budget spent, counts as a dead letter after the restart', async () => {
    shop = new DestinationServer();
    shop.answer = () => 'hang';
    await shop.listen();
    const data = children.dataDir();
    const file = writeConfig(data, {
      destinations: { shop: loopbackDestination(shop.port, { retry: { attempts: 1 }, timeoutMs: 30_000 }) },
      sources: { orders: { forward: [{ to: 'shop' }] } },
    });
    const env = { RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN, RECEPTION_CONFIG: file };
    const first = await children.start(env);
    await sendSome(first, 'orders', 1, 'cut');
    await eventually(() => shop?.requests.length === 1, 10_000, 'the attempt did not start');
    children.signal(first, 'SIGKILL');
    await timedExit(first, 5000);

    // At start the cut attempt is recorded as interrupted; it was the forward's last, so it is failed: a dead letter.
    const second = await children.start(env);
    await eventually(async () => (await openIssues(second)).length === 1, 10_000, 'no dead_letters issue after the restart');
    expect(await openIssues(second)).toEqual([
      expect.objectContaining({
        kind: 'dead_letters',
        subject: 'shop',
        count: 1,
        lastError: expect.stringContaining('interrupted') as unknown,
      }),
    ]);
    expect(await forwardsIn(second, 'failed')).toHaveLength(1);
  });
});
