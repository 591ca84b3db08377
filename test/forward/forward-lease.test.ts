import { afterEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { DestinationServer } from '../helpers/destination-server.js';

import { forwardsOf, send, startForwarding } from '../helpers/forwarding-app.js';

import { eventually } from '../helpers/eventually.js';

describe('leases of forwards claimed ahead', () => {
  let destination: DestinationServer | undefined;
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    await destination?.close();
  });

  it('are renewed while they wait in line: a slow destination gets each forward once, on its first attempt', async () => {
    destination = new DestinationServer();
    destination.answer = () => ({ status: 204, delayMs: 100 });
    await destination.listen();
    // One attempt at a time and a short lease: the twentieth forward waits about
    // two seconds in line, where a lease lasts 1 s unless renewed.
    server = await startForwarding(
      'sqlite',
      {
        destinations: { slow: { url: destination.url, allowPrivateNetwork: true, concurrency: 1, timeoutMs: 1000 } },
        sources: { a: { forward: [{ to: 'slow' }] } },
      },
      { forwardLeaseMs: 1000 },
    );
    const running = server;
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => send(running, 'a', `{"i":${i}}`)));
    await eventually(
      async () =>
        (await Promise.all(ids.map(async (id) => (await forwardsOf(running, id))[0]?.status))).every(
          (status) => status === 'succeeded',
        ),
      20_000,
    );
    for (const id of ids) {
      expect(destination.requestsFor(id), JSON.stringify((await forwardsOf(running, id))[0]?.attempts)).toHaveLength(1);
      expect((await forwardsOf(running, id))[0]?.attempts.map((a) => [a.n, a.error])).toEqual([[1, null]]);
    }
  });
});
