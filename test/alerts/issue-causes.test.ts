import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveAlerts } from '../../src/alerts/alerts.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';
import { stripeRequest } from '../helpers/provider-signatures.js';
import { RecordingSignals } from '../helpers/recording-signals.js';

/**
 * What opens an issue (CONTRACT 11, docs/alerts.md), on both stores, with a
 * real HTTP destination on loopback: each dead letter is an occurrence of
 * `dead_letters`, cleared by a retry; a backlog older than
 * `alerts.backlogSeconds` opens `backlog` and its draining clears it; the
 * 10th bad signature within 5 minutes opens `verification_failing`; a
 * transform that throws is `transform_failing`. The tracker is not here:
 * the signals are recorded.
 */

const STRIPE_SECRET = 'whsec_test_secret_for_issue_causes';

function config(url: string): ConfigFile {
  return {
    destinations: { shop: { url, allowPrivateNetwork: true, retry: { attempts: 1 } } },
    transforms: { broken: { code: 'export default (e) => { throw new Error("no total on " + e.body.id); }' } },
    sources: {
      orders: { forward: [{ to: 'shop' }] },
      shaped: { forward: [{ to: 'shop', transform: 'broken' }] },
      stripe: { verify: { scheme: 'stripe', secrets: [STRIPE_SECRET] } },
    },
    // Two seconds: the check that a younger backlog opens nothing keeps a margin on a busy machine.
    alerts: { backlogSeconds: 2 },
  };
}

describe.each(STORES)('what opens an issue (%s)', (kind) => {
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;
  let signals: RecordingSignals;

  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
    signals = new RecordingSignals();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination.close();
  });

  const start = async (backlogSweepMs = 100): Promise<RunningApp<InboxDatabase> | undefined> => {
    if (!(await storeAvailable(kind, 'issue cause tests'))) return undefined;
    const file = config(destination.url);
    server = await startForwarding(kind, file, {
      alerts: resolveAlerts(file.alerts),
      issues: signals,
      transforms: { definitions: transformDefinitions(file), users: transformUsers(file) },
      backlogSweepMs,
    });
    return server;
  };

  const settled = async (running: RunningApp<InboxDatabase>, ids: string[], status: string): Promise<void> => {
    await eventually(async () => {
      for (const id of ids) if ((await forwardsOf(running, id))[0]?.status !== status) return false;
      return true;
    });
  };

  it('counts each failed forward as a dead letter, and clears them once retried', async () => {
    destination.answer = () => ({ status: 500 });
    // No sweep of its own during the test: what clears the dead letters is the retry.
    const running = await start(60_000);
    if (running === undefined) return;
    const ids = [
      await send(running, 'orders', '{"n":1}'),
      await send(running, 'orders', '{"n":2}'),
      await send(running, 'orders', '{"n":3}'),
    ];
    await settled(running, ids, 'failed');
    await eventually(
      () => signals.occurrences('dead_letters', 'shop') === 3,
      5000,
      () => signals.about('shop').join(' '),
    );
    expect(signals.of('dead_letters', 'shop', 'occurred').map((c) => c.error)).toEqual(['HTTP 500', 'HTTP 500', 'HTTP 500']);
    // Cleared only once none is left failed.
    const clearedBefore = signals.of('dead_letters', 'shop', 'cleared').length;
    await running.app.forwardIssues.sweep();
    expect(signals.of('dead_letters', 'shop', 'cleared')).toHaveLength(clearedBefore);
    expect(signals.of('dead_letters', 'shop').at(-1)?.call).toBe('occurred');
    // Retried: the failed ones are pending again, then delivered; none is left failed.
    destination.answer = () => ({ status: 204 });
    const { json } = await api<{ retried: number }>(running, '/api/forwards/retry', {
      method: 'POST',
      body: { status: 'failed', destination: 'shop' },
    });
    expect(json.retried).toBe(3);
    await eventually(
      () => signals.of('dead_letters', 'shop', 'cleared').length > clearedBefore,
      5000,
      () => signals.about('shop').join(' '),
    );
    await settled(running, ids, 'succeeded');
    expect(signals.occurrences('dead_letters', 'shop')).toBe(3);
  });

  it('opens a backlog when the oldest forward waits longer than backlogSeconds, and clears it when it drains', async () => {
    const running = await start();
    if (running === undefined) return;
    expect((await api(running, '/api/destinations/shop/pause', { method: 'POST' })).status).toBe(204);
    const id = await send(running, 'orders', '{"n":1}');
    await new Promise((resolve) => setTimeout(resolve, 600));
    // Younger than two seconds: no backlog yet.
    expect(signals.occurrences('backlog', 'shop')).toBe(0);
    await eventually(
      () => signals.occurrences('backlog', 'shop') === 1,
      5000,
      () => signals.about('shop').join(' '),
    );
    expect(signals.of('backlog', 'shop', 'occurred')[0]?.error).toMatch(
      /^oldest forward waiting \d+s \(the destination is paused\)$/,
    );
    // Counted when it begins, not at every sweep.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(signals.occurrences('backlog', 'shop')).toBe(1);
    const before = signals.of('backlog', 'shop', 'cleared').length;
    expect((await api(running, '/api/destinations/shop/resume', { method: 'POST' })).status).toBe(204);
    await settled(running, [id], 'succeeded');
    await eventually(() => signals.of('backlog', 'shop', 'cleared').length > before, 5000);
    const last = signals.of('backlog', 'shop').at(-1);
    expect(last?.call).toBe('cleared');
  });

  it('opens verification_failing at the 10th bad signature within 5 minutes, not at the 9th', async () => {
    const running = await start();
    if (running === undefined) return;
    const bad = async (n: number): Promise<void> => {
      const signed = stripeRequest(`{"id":"evt_${n}","type":"charge.succeeded"}`, 'whsec_not_the_right_secret');
      const res = await fetch(`${running.url}/api/webhook/stripe`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
      });
      expect(res.status).toBe(401);
    };
    // A good one counts for nothing.
    const good = stripeRequest('{"id":"evt_ok","type":"charge.succeeded"}', STRIPE_SECRET);
    expect(
      (await fetch(`${running.url}/api/webhook/stripe`, { method: 'POST', headers: good.headers, body: good.body })).status,
    ).toBe(200);
    for (let n = 1; n <= 9; n++) await bad(n);
    expect(signals.occurrences('verification_failing', 'stripe')).toBe(0);
    await bad(10);
    expect(signals.occurrences('verification_failing', 'stripe')).toBe(1);
    expect(signals.of('verification_failing', 'stripe')[0]?.error).toContain('stripe');
    // Each further failure counts.
    await bad(11);
    expect(signals.occurrences('verification_failing', 'stripe')).toBe(2);
  });

  it('a transform that throws is transform_failing, on its name', async () => {
    const running = await start();
    if (running === undefined) return;
    const id = await send(running, 'shaped', '{"id":"ord_9"}');
    await settled(running, [id], 'failed');
    expect(signals.of('transform_failing', 'broken', 'occurred').map((c) => c.error)).toEqual([
      expect.stringContaining('no total on ord_9'),
    ]);
    expect(destination.requests).toHaveLength(0);
  });
});
