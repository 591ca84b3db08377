import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { tempDir } from '../helpers/temp-dir.js';

import { startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

import { killAllClis, startCli } from '../helpers/cli.js';

import { eventually } from '../helpers/eventually.js';

import { hmacHex, sendWebhook } from '../helpers/cli-send.js';

import { headerPairs, headerValue, Target, type Received } from '../helpers/listen-target.js';

/**
 * `reception listen` with every body kind (CONTRACT 9): the local app gets
 * the raw bytes exactly, with the Content-Type they came with (or none), on
 * both stores.
 */

async function multipart(): Promise<{ bytes: Buffer; contentType: string }> {
  const form = new FormData();
  form.append('from', 'ann@example.com');
  form.append('attachment', new Blob([Buffer.from(Array.from({ length: 256 }, (_, i) => i))], { type: 'image/png' }), 'a.png');
  const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { bytes: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') ?? '' };
}

describe.each(STORES)('reception listen, every body kind (%s)', { timeout: 60_000 }, (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  let target: Target;
  let dir: { path: string; remove: () => void };

  beforeEach(async () => {
    if (!(await storeAvailable(kind, 'listen body kind tests'))) return;
    server = await startForwarding(kind, {
      sources: { all: { accept: ['json', 'form', 'multipart', 'text', 'xml', 'any'] } },
    });
    target = new Target();
    await target.start();
    dir = tempDir('reception-listen-bodies-');
  });

  afterEach(async () => {
    if (server === undefined) return;
    killAllClis();
    await target.stop();
    await server.close();
    server = undefined;
    dir.remove();
  });

  it('forwards each kind byte for byte with its own Content-Type', async () => {
    if (server === undefined) return;
    const cli = startCli(
      ['listen', '--forward-to', target.url('/in'), '--source', 'all', '--state', join(dir.path, 'state.json')],
      { RECEPTION_URL: server.url, RECEPTION_TOKEN: server.token, HOME: dir.path },
    );
    await cli.waitForStderr(/connected to/);
    const form = await multipart();
    const sent: Array<{ bytes: Buffer; contentType: string | undefined }> = [
      form,
      {
        bytes: Buffer.from('{\n  "Type" : "Notification", "n": 12345678901234567890 }'),
        contentType: 'text/plain; charset=UTF-8',
      },
      { bytes: Buffer.from('caf\xe9', 'latin1'), contentType: 'text/plain; charset=iso-8859-1' },
      { bytes: Buffer.from('<?xml version="1.0"?>\r\n<a b="1">\r\n</a>'), contentType: 'application/soap+xml' },
      { bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]), contentType: 'image/png' },
      { bytes: Buffer.from('no type at all\r\n'), contentType: undefined },
    ];
    for (const { bytes, contentType } of sent) {
      const headers: Array<[string, string]> = [['X-Signature', `sha256=${hmacHex(bytes)}`]];
      if (contentType !== undefined) headers.unshift(['Content-Type', contentType]);
      await sendWebhook(server.url, '/api/webhook/all', bytes, headers);
    }
    await eventually(() => target.received.length === sent.length, 15_000, 'the target received every delivery');
    await cli.waitForLines(sent.length);
    sent.forEach(({ bytes, contentType }, index) => {
      const got = target.received[index] as Received;
      expect(got.body.equals(bytes), `delivery ${index}`).toBe(true);
      expect(headerValue(got.rawHeaders, 'content-type'), `delivery ${index}`).toBe(contentType);
      expect(headerPairs(got.rawHeaders).filter(([name]) => name.toLowerCase() === 'content-type')).toHaveLength(
        contentType === undefined ? 0 : 1,
      );
      expect(headerValue(got.rawHeaders, 'x-signature')).toBe(`sha256=${hmacHex(got.body)}`);
    });
    await cli.stop();
  });
});
