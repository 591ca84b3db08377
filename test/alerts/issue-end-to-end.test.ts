import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveAlerts } from '../../src/alerts/alerts.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

/**
 * The whole road of an issue, through the app's own tracker (no recorded
 * signals): a forward that dead-letters opens `dead_letters` in the store,
 * the API lists it, the notify destination is told `issue.opened`; a retry
 * that succeeds clears it, and the notify destination is told
 * `issue.resolved` (CONTRACT 11, docs/alerts.md).
 */
interface IssueItem {
  id: string;
  kind: string;
  subject: string;
  status: string;
  count: number;
  lastError: string | null;
}

describe.each(STORES)('an issue from its cause to its notification (%s)', (kind) => {
  let shop: DestinationServer;
  let ops: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;

  beforeEach(async () => {
    shop = new DestinationServer();
    ops = new DestinationServer();
    await Promise.all([shop.listen(), ops.listen()]);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await Promise.all([shop.close(), ops.close()]);
  });

  /** An app whose source `orders` forwards to `shop` (with `settings`), which answers 500 to the two webhooks sent; `ops` is told of issues. */
  const failingShop = async (settings: Record<string, unknown>): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'issue end-to-end tests'))) return undefined;
    const config: ConfigFile = {
      destinations: {
        shop: { url: shop.url, allowPrivateNetwork: true, ...settings },
        ops: { url: ops.url, allowPrivateNetwork: true },
      },
      sources: { orders: { forward: [{ to: 'shop' }] } },
      alerts: { notify: ['ops'] },
    };
    server = await startForwarding(kind, config, { alerts: resolveAlerts(config.alerts), issueTracker: { flushMs: 20 } });
    shop.answer = () => ({ status: 500, body: 'shop is down' });
    await send(server, 'orders', '{"n":1}');
    await send(server, 'orders', '{"n":2}');
    return server;
  };

  it('dead letters open an issue that the notify destination hears of, and a retry resolves it', async () => {
    const running = await failingShop({ retry: { attempts: 1 } });
    if (running === undefined) return;

    const open = async (): Promise<IssueItem[]> =>
      (await api<{ items: IssueItem[] }>(running, '/api/issues?status=open')).json.items;
    await eventually(
      async () => (await open()).some((i) => i.kind === 'dead_letters' && i.count === 2),
      10_000,
      'no dead_letters issue counting 2',
    );
    const [issue] = await open();
    expect(issue).toMatchObject({ kind: 'dead_letters', subject: 'shop', status: 'open', count: 2 });
    expect(issue?.lastError).toContain('500');

    await eventually(() => ops.requests.length === 1, 10_000, 'the notify destination heard nothing');
    const opened = JSON.parse(ops.requests[0]?.body.toString('utf8') ?? '{}') as { type: string; issue: IssueItem };
    expect(opened.type).toBe('issue.opened');
    expect(opened.issue).toMatchObject({ id: issue?.id, kind: 'dead_letters', subject: 'shop', status: 'open' });

    // The destination is fixed and its dead letters retried: the cause is gone, the issue resolves by itself.
    shop.answer = () => ({ status: 200 });
    const retried = await api(running, '/api/forwards/retry', {
      method: 'POST',
      body: { destination: 'shop', status: 'failed' },
    });
    expect(retried.status).toBeLessThan(300);
    await eventually(() => shop.requests.length === 4, 10_000, 'the retried forwards were not sent');
    await eventually(async () => (await open()).length === 0, 15_000, 'the issue did not resolve');
    await eventually(() => ops.requests.length === 2, 10_000, 'the notify destination was not told of the resolution');
    const resolved = JSON.parse(ops.requests[1]?.body.toString('utf8') ?? '{}') as { type: string; issue: IssueItem };
    expect(resolved).toMatchObject({ type: 'issue.resolved', issue: { id: issue?.id, status: 'resolved' } });
    const all = await api<{ items: IssueItem[] }>(running, '/api/issues');
    expect(all.json.items.map((i) => [i.kind, i.status])).toEqual([['dead_letters', 'resolved']]);
  });

  it('an open circuit opens destination_down, and its closing resolves it', async () => {
    const running = await failingShop({ breaker: { failures: 2, cooldownSeconds: 0.2 } });
    if (running === undefined) return;
    const issues = async (): Promise<IssueItem[]> => (await api<{ items: IssueItem[] }>(running, '/api/issues')).json.items;
    await eventually(
      async () => (await issues()).some((i) => i.kind === 'destination_down' && i.status === 'open'),
      10_000,
      'no destination_down issue',
    );
    const opened = (await issues()).find((i) => i.kind === 'destination_down');
    expect(opened).toMatchObject({ subject: 'shop', status: 'open' });
    expect(opened?.lastError).toContain('500');
    // The destination answers again: the next probe closes the circuit, and the issue resolves by itself.
    shop.answer = () => ({ status: 200 });
    await eventually(
      async () => (await issues()).find((i) => i.id === opened?.id)?.status === 'resolved',
      15_000,
      'the issue did not resolve',
    );
    const told = () => ops.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { type: string; issue: IssueItem });
    await eventually(
      () => told().some((e) => e.type === 'issue.resolved' && e.issue.id === opened?.id),
      10_000,
      'no issue.resolved',
    );
    expect(
      told()
        .filter((e) => e.issue.id === opened?.id)
        .map((e) => e.type),
    ).toEqual(['issue.opened', 'issue.resolved']);
  });
});
