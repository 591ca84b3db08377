import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { api, forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

describe('forwarding metrics', () => {
  let destination: DestinationServer | undefined;
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    await destination?.close();
  });

  it('counts attempts by outcome, times them, and reads pending and the oldest pending age from the outbox', async () => {
    destination = new DestinationServer();
    await destination.listen();
    destination.answer = (_r, n) => ({ status: n === 1 ? 500 : 200 });
    server = await startForwarding('sqlite', {
      destinations: {
        app: { url: destination.url, allowPrivateNetwork: true, retry: { initialMs: 1, maxMs: 5 } },
        worker: { pull: true },
      },
      sources: { a: { forward: [{ to: 'app' }, { to: 'worker' }] } },
    });
    const running = server;
    const id = await send(running, 'a', '{"n":1}');
    await eventually(async () => (await forwardsOf(running, id)).find((f) => f.destination === 'app')?.status === 'succeeded');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = await (await fetch(`${running.url}/metrics`)).text();
    expect(text).toContain('reception_forward_attempts_total{destination="app",outcome="retry"} 1');
    expect(text).toContain('reception_forward_attempts_total{destination="app",outcome="succeeded"} 1');
    expect(text).toMatch(/reception_forward_attempt_duration_seconds_count\{destination="app"\} 2/);
    expect(text).toContain('reception_forward_pending{destination="worker"} 1');
    expect(text).toContain('reception_forward_pending{destination="app"} 0');
    const age = /reception_forward_oldest_pending_seconds\{destination="worker"\} ([\d.e-]+)/.exec(text)?.[1];
    expect(Number(age)).toBeGreaterThan(0);
    const listed = await api<{ items: Array<{ name: string; kind: string; url: string | null; lastSuccessAt: string | null }> }>(
      running,
      '/api/destinations',
    );
    expect(listed.json.items.map((d) => [d.name, d.kind])).toEqual([
      ['app', 'http'],
      ['worker', 'pull'],
    ]);
    expect(listed.json.items[0]?.lastSuccessAt).toMatch(/Z$/);
  });
});
