import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { RunningApp } from '../helpers/app.js';
import { startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';
import { RFC3339_UTC_MS, type DeliveryPage } from '../helpers/exchange.js';

/**
 * Answers (CONTRACT 9): a source's own status, headers and body for a
 * stored delivery and for a duplicate (with the first delivery's values),
 * through the node:http front door, on both stores.
 */

const CONFIG: ConfigFile = {
  sources: {
    accepted: {
      dedup: { header: 'X-Request-Id' },
      response: { status: 202, headers: { 'X-Handled-By': 'reception' }, body: 'ok {id} {source} {receivedAt} {other}' },
    },
    'json "answer"': {
      response: { headers: { 'Content-Type': 'application/json' }, body: '{"ok":true,"source":"{source}","id":"{id}"}' },
    },
    '<b>html<\\b>': { response: { headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<p>{source}</p>' } },
    'no-content': { dedup: { header: 'X-Request-Id' }, response: { status: 204, headers: { 'X-Seen': 'yes' } } },
    'status-only': { dedup: { header: 'X-Request-Id' }, response: { status: 201 } },
  },
};

describe.each(STORES)('custom answers (%s)', (kind) => {
  let server: RunningApp<InboxDatabase> | undefined;
  beforeAll(async () => {
    if (await storeAvailable(kind, 'custom answer tests')) server = await startForwarding(kind, CONFIG);
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (source: string, headers: Record<string, string> = {}, body = '{"a":1}'): Promise<Response> =>
    fetch(`${(server as RunningApp<InboxDatabase>).url}/api/webhook/${encodeURIComponent(source)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  /** The newest delivery of a source, as the API lists it. */
  const newest = async (source: string): Promise<{ id: string; receivedAt: string; count: number }> => {
    const running = server as RunningApp<InboxDatabase>;
    const res = await fetch(`${running.url}/api/deliveries?source=${encodeURIComponent(source)}`, { headers: running.auth });
    const page = (await res.json()) as DeliveryPage;
    const first = page.items[0];
    if (first === undefined) throw new Error(`no delivery for ${source}`);
    return { id: first.id, receivedAt: first.receivedAt, count: page.items.length };
  };

  it('answers a stored delivery, and a duplicate with the first one values, as the source says', async () => {
    if (server === undefined) return;
    const first = await post('accepted', { 'x-request-id': 'r-1' });
    expect(first.status).toBe(202);
    expect(first.headers.get('x-handled-by')).toBe('reception');
    expect(first.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect(first.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const text = await first.text();
    const stored = await newest('accepted');
    expect(text).toBe(`ok ${stored.id} accepted ${stored.receivedAt} {other}`);
    expect(stored.receivedAt).toMatch(RFC3339_UTC_MS);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const repeat = await post('accepted', { 'x-request-id': 'r-1' });
    expect(repeat.status).toBe(202);
    expect(await repeat.text()).toBe(text);
    expect((await newest('accepted')).count).toBe(1);
  });

  it('escapes the placeholders for a JSON or markup answer', async () => {
    if (server === undefined) return;
    const json = await post('json "answer"');
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json');
    const stored = await newest('json "answer"');
    expect(await json.json()).toEqual({ ok: true, source: 'json "answer"', id: stored.id });

    const html = await post('<b>html<\\b>');
    expect(await html.text()).toBe('<p>&lt;b&gt;html&lt;\\b&gt;</p>');
  });

  it('sends a 204 without content or Content-Length, and the connection goes on', async () => {
    if (server === undefined) return;
    const { port } = new URL(server.url);
    const request = (id: string, last: boolean): string =>
      `POST /api/webhook/no-content HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Request-Id: ${id}\r\n` +
      `Content-Length: 7\r\n${last ? 'Connection: close\r\n' : ''}\r\n{"a":1}`;
    const written = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
      // Pipelined: a second request behind the first on the same connection, then a duplicate of the first.
      socket.write(request('n-1', false) + request('n-2', false) + request('n-1', true));
    });
    const answers = written.split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(3);
    for (const answer of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 204 /);
      expect(answer.toLowerCase()).not.toContain('content-length');
      expect(answer.toLowerCase()).not.toContain('transfer-encoding');
      expect(answer.toLowerCase()).toContain('x-seen: yes');
      expect(answer.endsWith('\r\n\r\n')).toBe(true);
    }
    expect((await newest('no-content')).count).toBe(2);
  });

  it('keeps section 1 JSON when the source sets a status only', async () => {
    if (server === undefined) return;
    const first = await post('status-only', { 'x-request-id': 's-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const receipt = (await first.json()) as Record<string, unknown>;
    expect(receipt).toEqual({ id: expect.any(String), source: 'status-only', receivedAt: expect.stringMatching(RFC3339_UTC_MS) });
    const repeat = await post('status-only', { 'x-request-id': 's-1' });
    expect(repeat.status).toBe(201);
    expect(await repeat.json()).toEqual({ ...receipt, duplicate: true });
  });

  it('answers refusals as problems, whatever the source answers a delivery with', async () => {
    if (server === undefined) return;
    const refused = await post('accepted', { 'content-type': 'text/plain' }, 'x');
    expect(refused.status).toBe(415);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get('x-handled-by')).toBeNull();
  });

  it('leaves the sources without a response of their own as they were', async () => {
    if (server === undefined) return;
    const answer = await post('plain');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toBeNull();
    expect(Object.keys((await answer.json()) as object)).toEqual(['id', 'source', 'receivedAt']);
  });
});
