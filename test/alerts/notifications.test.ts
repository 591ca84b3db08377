import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveAlerts } from '../../src/alerts/alerts.js';
import { ISSUES_SOURCE } from '../../src/alerts/issue-event.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { Issue, IssueChange } from '../../src/issues/issue-signals.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';
import { RecordingSignals } from '../helpers/recording-signals.js';

/**
 * Notifications (CONTRACT 11, docs/alerts.md): an issue that opens or
 * resolves is stored as a delivery of `reception:issues` and forwarded to the
 * `alerts.notify` destinations through the outbox, with a transform where
 * the entry names one, on both stores, to real HTTP destinations on
 * loopback. A notify destination that fails dead-letters its notification
 * and is never the subject of an issue.
 */

const SLACK_CODE = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'examples', 'issue-to-slack.mjs'), 'utf8');

const T0 = Date.parse('2026-11-28T01:00:00.000Z');
const ISSUE: Issue = {
  id: 'iss_01',
  kind: 'destination_down',
  subject: 'shop',
  status: 'open',
  count: 3,
  firstAt: T0,
  lastAt: T0 + 60_000,
  resolvedAt: null,
  lastError: 'HTTP 500',
};
const OPENED: IssueChange = { type: 'issue.opened', issue: ISSUE };
const RESOLVED: IssueChange = {
  type: 'issue.resolved',
  issue: { ...ISSUE, id: 'iss_01', status: 'resolved', count: 4, lastAt: T0 + 120_000, resolvedAt: T0 + 180_000 },
};

describe.each(STORES)('notifications of issues (%s)', (kind) => {
  let ops: DestinationServer;
  let slack: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;
  let signals: RecordingSignals;

  beforeEach(async () => {
    ops = new DestinationServer();
    slack = new DestinationServer();
    await Promise.all([ops.listen(), slack.listen()]);
    signals = new RecordingSignals();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await Promise.all([ops.close(), slack.close()]);
  });

  const start = async (config: ConfigFile, backlogSweepMs?: number): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'notification tests'))) return undefined;
    server = await startForwarding(kind, config, {
      alerts: resolveAlerts(config.alerts),
      issues: signals,
      transforms: { definitions: transformDefinitions(config), users: transformUsers(config) },
      ...(backlogSweepMs === undefined ? {} : { backlogSweepMs }),
    });
    return server;
  };

  /** Whether a body is about an issue that opened: the JSON event's type, or the Slack message made of it. */
  const aboutOpening = (text: string): boolean => text.includes('"issue.opened"') || text.includes(':rotating_light:');

  /** What the destination received, the opening first (two deliveries are forwarded side by side, in either order). */
  const bodies = (destination: DestinationServer): unknown[] =>
    destination.requests
      .map((r) => r.body.toString('utf8'))
      .sort((a, b) => Number(aboutOpening(b)) - Number(aboutOpening(a)))
      .map((text) => JSON.parse(text) as unknown);

  it('a notify destination receives issue.opened and issue.resolved; a Slack one the message its transform makes', async () => {
    const running = await start({
      destinations: {
        ops: { url: ops.url, allowPrivateNetwork: true },
        slack: { url: slack.url, allowPrivateNetwork: true },
      },
      transforms: { 'issue-to-slack': { code: SLACK_CODE } },
      alerts: { notify: ['ops', { to: 'slack', transform: 'issue-to-slack' }] },
    });
    if (running === undefined) return;
    await running.app.notifier.notify(OPENED);
    await running.app.notifier.notify(RESOLVED);
    await eventually(() => ops.requests.length === 2 && slack.requests.length === 2);
    expect(bodies(ops)).toEqual([
      {
        type: 'issue.opened',
        issue: {
          id: 'iss_01',
          kind: 'destination_down',
          subject: 'shop',
          status: 'open',
          count: 3,
          firstAt: '2026-11-28T01:00:00.000Z',
          lastAt: '2026-11-28T01:01:00.000Z',
          resolvedAt: null,
          lastError: 'HTTP 500',
        },
      },
      {
        type: 'issue.resolved',
        issue: expect.objectContaining({ status: 'resolved', count: 4, resolvedAt: '2026-11-28T01:03:00.000Z' }) as unknown,
      },
    ]);
    for (const request of ops.requests) expect(request.headers['content-type']).toBe('application/json');
    const [opened, resolved] = bodies(slack) as Array<{ text: string; blocks: unknown[] }>;
    expect(opened?.text).toBe(':rotating_light: Reception: destination down: shop (HTTP 500)');
    expect(resolved?.text).toBe(':white_check_mark: Reception: resolved, destination down: shop (4 occurrences)');
    expect(opened?.blocks).toHaveLength(2);
    // Each is a delivery of reception:issues in the inbox, with its event type and one forward per notify entry.
    const { json } = await api<{ items: Array<{ id: string; source: string; eventType: string }> }>(
      running,
      `/api/deliveries?source=${encodeURIComponent(ISSUES_SOURCE)}`,
    );
    expect(json.items.map((d) => d.eventType).sort()).toEqual(['issue.opened', 'issue.resolved']);
    const id = json.items[0]?.id ?? '';
    await eventually(async () => (await forwardsOf(running, id)).every((f) => f.status === 'succeeded'));
    const forwards = await forwardsOf(running, id);
    expect(forwards.map((f) => [f.destination, f.status, f.attempts[0]?.transform?.name ?? null]).sort()).toEqual([
      ['ops', 'succeeded', null],
      ['slack', 'succeeded', 'issue-to-slack'],
    ]);
    // The same change told twice is one notification.
    await running.app.notifier.notify(OPENED);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ops.requests).toHaveLength(2);
  });

  it('a notify destination that answers 500 dead-letters its notification, and is never the subject of an issue', async () => {
    // Two attempts 2 s apart (Retry-After: backoff alone has full jitter): long enough pending for a 1 s backlog, then failed.
    ops.answer = () => ({ status: 500, headers: { 'retry-after': '2' } });
    slack.answer = () => ({ status: 500, headers: { 'retry-after': '2' } });
    const retry = { attempts: 2, initialMs: 2000, maxMs: 2000 };
    const running = await start(
      {
        destinations: {
          ops: { url: ops.url, allowPrivateNetwork: true, retry },
          // Not a notify destination: it fails the same way, and is the subject of issues.
          shop: { url: slack.url, allowPrivateNetwork: true, retry },
        },
        sources: { orders: { forward: [{ to: 'shop' }] } },
        alerts: { backlogSeconds: 1, notify: ['ops'] },
      },
      100,
    );
    if (running === undefined) return;
    await running.app.notifier.notify(OPENED);
    const order = await send(running, 'orders', '{"id":1}');
    const { json } = await api<{ items: Array<{ id: string }> }>(
      running,
      `/api/deliveries?source=${encodeURIComponent(ISSUES_SOURCE)}`,
    );
    const notification = json.items[0]?.id ?? '';
    await eventually(
      async () =>
        (await forwardsOf(running, notification))[0]?.status === 'failed' &&
        (await forwardsOf(running, order))[0]?.status === 'failed',
      15_000,
    );
    expect(ops.requests).toHaveLength(2);
    await running.app.forwardIssues.sweep();
    // The same failures of a destination that is not notified open issues (the test can fail)...
    expect(signals.occurrences('dead_letters', 'shop')).toBe(1);
    expect(signals.occurrences('backlog', 'shop')).toBe(1);
    // ...but none about the notify destination.
    expect(signals.calls.filter((c) => c.subject === 'ops' && c.call === 'occurred')).toEqual([]);
  }, 20_000);

  it('a reload (setAlerts) changes who is told at once; none named, nothing is stored', async () => {
    const running = await start({
      destinations: {
        ops: { url: ops.url, allowPrivateNetwork: true },
        slack: { url: slack.url, allowPrivateNetwork: true },
      },
      alerts: { notify: ['ops'] },
    });
    if (running === undefined) return;
    await running.app.notifier.notify(OPENED);
    running.app.setAlerts(resolveAlerts({ notify: ['slack'] }));
    await running.app.notifier.notify(RESOLVED);
    await eventually(() => ops.requests.length === 1 && slack.requests.length === 1);
    expect(bodies(ops)).toMatchObject([{ type: 'issue.opened' }]);
    expect(bodies(slack)).toMatchObject([{ type: 'issue.resolved' }]);
    running.app.setAlerts(resolveAlerts(undefined));
    await running.app.notifier.notify({ type: 'issue.opened', issue: { ...ISSUE, id: 'iss_02' } });
    const { json } = await api<{ items: unknown[] }>(running, `/api/deliveries?source=${encodeURIComponent(ISSUES_SOURCE)}`);
    expect(json.items).toHaveLength(2);
  });

  it('refuses a sender posting to the reserved source', async () => {
    const running = await start({
      destinations: { ops: { url: ops.url, allowPrivateNetwork: true } },
      alerts: { notify: ['ops'] },
    });
    if (running === undefined) return;
    const res = await fetch(`${running.url}/api/webhook/${encodeURIComponent(ISSUES_SOURCE)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"type":"issue.opened"}',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('invalid_source');
    expect(problem.detail).toContain('reserved');
    expect(ops.requests).toHaveLength(0);
  });
});
