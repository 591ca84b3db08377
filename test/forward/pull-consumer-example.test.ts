import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { startChild } from '../helpers/child-process.js';
import { forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

/** The example that docs/pull-consumers.md shows, run as it is. */
const EXAMPLE = fileURLToPath(new URL('../../docs/examples/pull-consumer.mjs', import.meta.url));

describe.each(STORES)('the example pull consumer of docs/pull-consumers.md (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('claims the deliveries waiting, handles each once and acks it with its lease', async () => {
    if (!(await storeAvailable(kind, 'the pull consumer example'))) return;
    server = await startForwarding(kind, {
      destinations: { worker: { pull: true } },
      sources: { stripe: { forward: [{ to: 'worker' }] } },
    });
    const ids = [];
    for (let n = 1; n <= 12; n++) ids.push(await send(server, 'stripe', `{"type":"invoice.paid","n":${n}}`));
    const consumer = startChild(process.execPath, [EXAMPLE], {
      RECEPTION_URL: server.url,
      RECEPTION_TOKEN: server.token,
      RECEPTION_DESTINATION: 'worker',
      RECEPTION_PULL_ONCE: '1',
    });
    expect(await consumer.exited, consumer.stderr()).toBe(0);
    expect(consumer.stderr()).toBe('');
    const handled = consumer.lines.map((line) => (JSON.parse(line) as { handled: string; source: string }).handled);
    expect(handled).toEqual(ids);
    for (const id of ids) expect((await forwardsOf(server, id))[0]).toMatchObject({ status: 'succeeded', attempts: [{ n: 1 }] });
  });
});
