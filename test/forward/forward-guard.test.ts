import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { api, forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

/**
 * The guard against real sockets. Only loopback is ever a target here (this
 * machine's rule): 10/8, 169.254.169.254 and rebinding names are covered
 * without a socket in test/unit/forward/network-guard.test.ts.
 */
describe('the private-network guard on real connections', () => {
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;

  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination.close();
  });

  it.each([
    ['the loopback address', (port: number) => `http://127.0.0.1:${port}/hooks`],
    ['an IPv4-mapped IPv6 loopback', (port: number) => `http://[::ffff:127.0.0.1]:${port}/hooks`],
    ['a name that resolves to 127.0.0.1', (port: number) => `http://localhost:${port}/hooks`],
  ])(
    'refuses %s without allowPrivateNetwork, sending nothing, failed after one attempt, saying which setting allows it',
    async (_what, url) => {
      // A budget of 12 attempts over minutes: the refusal must not spend it (CONTRACT 6, 2026-11-27).
      server = await startForwarding('sqlite', {
        destinations: { app: { url: url(destination.port), retry: { attempts: 12, initialMs: 60_000, maxMs: 60_000 } } },
        sources: { shop: { forward: [{ to: 'app' }] } },
      });
      const running = server;
      const id = await send(running, 'shop', '{"a":1}');
      await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'failed');
      const [forward] = await forwardsOf(running, id);
      expect(forward?.nextAttemptAt).toBeNull();
      expect(forward?.attempts).toHaveLength(1);
      for (const attempt of forward?.attempts ?? []) {
        expect(attempt.status).toBeNull();
        expect(attempt.response).toBeNull();
        expect(attempt.error).toMatch(/^destination_not_allowed: .*allowPrivateNetwork: true/);
      }
      const listed = await api<{ items: Array<{ lastError: string | null; attemptCount: number }> }>(running, '/api/forwards');
      expect(listed.json.items[0]).toMatchObject({
        attemptCount: 1,
        lastError: expect.stringMatching(/^destination_not_allowed: .*allowPrivateNetwork: true/),
      });
      expect(destination.requests).toEqual([]);
    },
  );

  it('sends to the same address once the destination allows private networks', async () => {
    server = await startForwarding('sqlite', {
      destinations: { app: { url: `http://localhost:${destination.port}/hooks`, allowPrivateNetwork: true } },
      sources: { shop: { forward: [{ to: 'app' }] } },
    });
    const running = server;
    const id = await send(running, 'shop', '{"a":1}');
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded');
    expect(destination.requestsFor(id)).toHaveLength(1);
  });
});
