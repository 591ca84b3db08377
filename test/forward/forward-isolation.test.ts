import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { api, send, startForwarding } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

describe('a dead destination costs receiving nothing', () => {
  let destination: DestinationServer | undefined;
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    await destination?.close();
  });

  it('answers every webhook while every attempt hangs, and a healthy destination beside it keeps up', async () => {
    const dead = new DestinationServer();
    dead.answer = () => 'hang';
    await dead.listen();
    destination = new DestinationServer();
    await destination.listen();
    server = await startForwarding('sqlite', {
      destinations: {
        dead: { url: dead.url, allowPrivateNetwork: true, timeoutMs: 60_000, concurrency: 4 },
        healthy: { url: destination.url, allowPrivateNetwork: true },
      },
      sources: { a: { forward: [{ to: 'dead' }, { to: 'healthy' }] } },
    });
    const running = server;
    const started = Date.now();
    const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => send(running, 'a', `{"i":${i}}`)));
    const elapsed = Date.now() - started;
    await eventually(() => new Set(destination?.requests.map((r) => r.headers['webhook-id'])).size === 200, 20_000);
    expect(dead.requests.length).toBe(4);
    const states = await api<{ items: Array<{ name: string; pending: number }> }>(running, '/api/destinations');
    expect(states.json.items.find((d) => d.name === 'dead')?.pending).toBe(200);
    expect(ids).toHaveLength(200);
    // Not a timing assertion on speed, only that nobody waited for the hung attempts (60 s each).
    expect(elapsed).toBeLessThan(30_000);
    await dead.close();
  });
});
