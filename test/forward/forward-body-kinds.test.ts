import { afterEach, describe, expect, it } from 'vitest';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { api, forwardsOf, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

/**
 * Route filters over the bodies of CONTRACT 9: a multipart body is
 * `{ fields, files }`, text a string, one taken by `any` null; and a pull
 * consumer gets the delivery with that body.
 */
describe.each(STORES)('route filters over every body kind (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const post = async (source: string, body: FormData | string, headers: Record<string, string> = {}): Promise<string> => {
    const running = server as RunningApp<InboxDatabase>;
    const res = await fetch(`${running.url}/api/webhook/${source}`, { method: 'POST', body, headers });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return (JSON.parse(text) as { id: string }).id;
  };

  it('routes by multipart fields, by text, and never a null body by a field of it', async () => {
    if (!(await storeAvailable(kind, 'body kind route tests'))) return;
    server = await startForwarding(kind, {
      destinations: { replies: { pull: true }, alarms: { pull: true } },
      sources: {
        mail: { accept: ['multipart'], forward: [{ to: 'replies', filter: { 'body.fields.subject': { $startsWith: 'Re:' } } }] },
        log: { accept: ['text', 'any'], forward: [{ to: 'alarms', filter: { body: { $contains: 'ALARM' } } }] },
      },
    });
    const reply = new FormData();
    reply.append('subject', 'Re: invoice');
    reply.append('file', new Blob(['%PDF-1.7']), 'invoice.pdf');
    const other = new FormData();
    other.append('subject', 'Hello');
    const replyId = await post('mail', reply);
    const otherId = await post('mail', other);
    const alarmId = await post('log', 'disk ALARM on host 7', { 'content-type': 'text/plain' });
    const quietId = await post('log', 'all well', { 'content-type': 'text/plain' });
    const binaryId = await post('log', 'ALARM but as bytes', { 'content-type': 'application/octet-stream' });

    expect((await forwardsOf(server, replyId)).map((f) => f.destination)).toEqual(['replies']);
    expect(await forwardsOf(server, otherId)).toEqual([]);
    expect((await forwardsOf(server, alarmId)).map((f) => f.destination)).toEqual(['alarms']);
    expect(await forwardsOf(server, quietId)).toEqual([]);
    expect(await forwardsOf(server, binaryId)).toEqual([]);

    const claimed = await api<{ items: Array<{ delivery: { id: string; body: unknown } }> }>(
      server,
      '/api/destinations/replies/claim',
      { method: 'POST', body: { max: 10 } },
    );
    expect(claimed.json.items.map((item) => item.delivery)).toEqual([
      {
        ...claimed.json.items[0]?.delivery,
        id: replyId,
        body: {
          fields: { subject: 'Re: invoice' },
          files: [{ field: 'file', filename: 'invoice.pdf', contentType: 'application/octet-stream', size: 8 }],
        },
      },
    ]);
  });
});
