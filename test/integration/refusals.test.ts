import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemFor, type ProblemCode } from '../../src/platform/errors/problem-catalogue.js';
import { SourceRules } from '../../src/receive/source-rules.js';
import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import { startAppOnKind, type RunningApp, type StoreKind } from '../helpers/app.js';
import { requirePostgres } from '../helpers/postgres.js';
import { DEFAULT_POLICY } from '../helpers/configured-app.js';
import { send, sendRaw, sendUntilClose, type Exchange } from '../helpers/exchange.js';
import { latestRefusalSeq, newestRefusal, refusalPage, type RefusalJson } from './refusal-support.js';

const SECRET = 'refusals-secret-7a2c';
const TIMEOUT_MS = 700;

const kinds: StoreKind[] = ['sqlite'];
if (await requirePostgres('the refusal tests on PostgreSQL')) kinds.push('postgres');

/**
 * CONTRACT 9: every request to /api/webhook/{source} answered with a 4xx
 * (or a 503 the store did not cause) is kept as a refusal, with what the
 * sender was told, and read back from GET /api/refusals; on both stores.
 */
describe.each(kinds)('refusals on %s', (kind) => {
  let server: RunningApp<InboxDatabase>;

  beforeAll(async () => {
    server = await startAppOnKind(kind, {
      requestTimeoutMs: TIMEOUT_MS,
      refusalWriter: { intervalMs: 10 },
      rules: SourceRules.fromConfig(
        {
          strict: true,
          sources: {
            plain: {},
            signed: { verify: { scheme: 'github', secrets: [SECRET] } },
            keeps: { verify: { scheme: 'github', secrets: [SECRET] }, onFailure: 'keep' },
            small: { maxBodyBytes: 64 },
            limited: { rateLimit: { requests: 1, perSeconds: 60 } },
            meta: { handshake: { type: 'meta', verifyToken: 'right-token' } },
          },
        },
        DEFAULT_POLICY,
      ),
    });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Sends, then reads the refusal that it left; checks it tells what the sender was told. */
  async function refusalOf(exchange: () => Promise<Exchange>, code: ProblemCode): Promise<RefusalJson> {
    const before = await latestRefusalSeq(server);
    const answer = await exchange();
    const problem = JSON.parse(answer.text) as { code: string; detail: string };
    expect(answer.status, answer.text).toBe(problemFor(code, '').status);
    expect(problem.code).toBe(code);
    const refusal = await newestRefusal(server, before);
    expect(refusal).toMatchObject({ status: answer.status, code, detail: problem.detail });
    return refusal;
  }

  const json = (body: string, extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...extra,
  });

  it('keeps a 401 signature_invalid with its headers redacted and its body, and the detail the sender got', async () => {
    const body = '{"action":"opened"}';
    const refusal = await refusalOf(
      () =>
        send(server, {
          path: '/api/webhook/signed?x=1',
          headers: json(body, { 'X-Hub-Signature-256': 'sha256=00', Authorization: 'Bearer secret-value' }),
          body,
        }),
      'signature_invalid',
    );
    expect(refusal).toMatchObject({
      source: 'signed',
      method: 'POST',
      contentType: 'application/json',
      size: body.length,
      bodyPreview: body,
    });
    expect(refusal.detail).toMatch(/github signature check failed/);
    expect(refusal.headers).toContainEqual(['X-Hub-Signature-256', 'sha256=00']);
    expect(refusal.headers).toContainEqual(['Authorization', '[redacted]']);
    expect(JSON.stringify(refusal)).not.toContain('secret-value');
    expect(refusal.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('keeps a delivery that failed verification with onFailure: keep as a delivery, not a refusal', async () => {
    const before = await latestRefusalSeq(server);
    const body = '{"a":1}';
    const answer = await send(server, {
      path: '/api/webhook/keeps',
      headers: json(body, { 'X-Hub-Signature-256': 'sha256=00' }),
      body,
    });
    expect(answer.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await latestRefusalSeq(server)).toBe(before);
    const { items } = (await (await fetch(`${server.url}/api/deliveries?source=keeps`, { headers: server.auth })).json()) as {
      items: Array<{ verification: { status: string } }>;
    };
    expect(items.map((d) => d.verification.status)).toEqual(['failed']);
  });

  it('keeps a signed request that passes as a delivery, and nothing as a refusal', async () => {
    const before = await latestRefusalSeq(server);
    const body = '{"ok":true}';
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const answer = await send(server, {
      path: '/api/webhook/signed',
      headers: json(body, { 'X-Hub-Signature-256': signature }),
      body,
    });
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await latestRefusalSeq(server)).toBe(before);
  });

  it('keeps a 404 unknown_source (strict) with the name it was sent to', async () => {
    const body = '{"a":1}';
    const refusal = await refusalOf(
      () => send(server, { path: '/api/webhook/st%C3%BCck', headers: json(body), body }),
      'unknown_source',
    );
    expect(refusal).toMatchObject({ source: 'stück', bodyPreview: body, size: 7 });
  });

  it('keeps a 400 invalid_source with source null: a bad escape, and a raw byte that Node refuses in the path', async () => {
    const escaped = await refusalOf(
      () => send(server, { path: '/api/webhook/%FF', headers: json('{}'), body: '{}' }),
      'invalid_source',
    );
    expect(escaped).toMatchObject({ source: null, method: 'POST', bodyPreview: '{}' });
    const before = await latestRefusalSeq(server);
    const { answer } = await sendUntilClose(
      server,
      'POST /api/webhook/st\u00fcck HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const raw = await newestRefusal(server, before);
    expect(raw).toMatchObject({ source: null, method: 'POST', code: 'invalid_source', status: 400, headers: [] });
  });

  it('keeps a 413 payload_too_large without the body: by Content-Length and as it arrives (chunked)', async () => {
    const big = `{"pad":"${'x'.repeat(200)}"}`;
    const declared = await refusalOf(
      () => send(server, { path: '/api/webhook/small', headers: json(big), body: big }),
      'payload_too_large',
    );
    expect(declared).toMatchObject({ source: 'small', bodyPreview: '', size: big.length });
    const chunked = await refusalOf(
      () =>
        sendRaw(
          server,
          'POST /api/webhook/small HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n' +
            `Connection: close\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
        ),
      'payload_too_large',
    );
    expect(chunked.bodyPreview).toBe('');
    expect(chunked.size).toBeGreaterThan(64);
  });

  it('keeps a 415 with the body that came, whether refused before it was read or after', async () => {
    const text = 'hello=world, plain text';
    const before = await refusalOf(
      () => send(server, { path: '/api/webhook/plain', headers: { 'content-type': 'text/plain' }, body: text }),
      'unsupported_media_type',
    );
    expect(before).toMatchObject({ source: 'plain', contentType: 'text/plain', size: text.length, bodyPreview: text });
    const after = await refusalOf(
      () =>
        sendRaw(
          server,
          'POST /api/webhook/plain HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
            `${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`,
        ),
      'unsupported_media_type',
    );
    expect(after).toMatchObject({ contentType: '', size: text.length, bodyPreview: text });
  });

  it('keeps the first 4 KiB of a long body as text, invalid UTF-8 replaced, a character cut at the end left off', async () => {
    // 4095 ASCII bytes, then "é" (2 bytes) across the 4 KiB mark, then more.
    const long = Buffer.concat([Buffer.from('a'.repeat(4095)), Buffer.from('é'), Buffer.from('b'.repeat(5000))]);
    const cut = await refusalOf(
      () => send(server, { path: '/api/webhook/plain', headers: { 'content-type': 'text/plain' }, body: long }),
      'unsupported_media_type',
    );
    expect(cut.size).toBe(long.length);
    expect(cut.bodyPreview).toBe('a'.repeat(4095));
    const invalid = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const replaced = await refusalOf(
      () => send(server, { path: '/api/webhook/plain', headers: { 'content-type': 'application/json' }, body: invalid }),
      'invalid_json',
    );
    expect(replaced.bodyPreview).toBe('{"a":"\ufffd\ufffd"}');
  });

  it('keeps a 422 json_not_object, a 400 empty_body and a 405 with their details', async () => {
    const array = await refusalOf(
      () => send(server, { path: '/api/webhook/plain', headers: json('[1,2]'), body: '[1,2]' }),
      'json_not_object',
    );
    expect(array.bodyPreview).toBe('[1,2]');
    const empty = await refusalOf(() => send(server, { path: '/api/webhook/plain', headers: json(''), body: '' }), 'empty_body');
    expect(empty).toMatchObject({ size: 0, bodyPreview: '' });
    const get = await refusalOf(() => send(server, { method: 'GET', path: '/api/webhook/plain' }), 'method_not_allowed');
    expect(get).toMatchObject({ method: 'GET', detail: 'Use POST to send a webhook, not GET.' });
  });

  it('keeps a 429 rate_limited and a 403 handshake_failed; an answered handshake is no refusal', async () => {
    await send(server, { path: '/api/webhook/limited', headers: json('{}'), body: '{}' });
    const limited = await refusalOf(
      () => send(server, { path: '/api/webhook/limited', headers: json('{}'), body: '{}' }),
      'rate_limited',
    );
    expect(limited.source).toBe('limited');
    const handshake = await refusalOf(
      () =>
        send(server, {
          method: 'GET',
          path: '/api/webhook/meta?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=c',
        }),
      'handshake_failed',
    );
    expect(handshake.source).toBe('meta');
    const before = await latestRefusalSeq(server);
    const ok = await send(server, {
      method: 'GET',
      path: '/api/webhook/meta?hub.mode=subscribe&hub.verify_token=right-token&hub.challenge=c',
    });
    expect(ok.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await latestRefusalSeq(server)).toBe(before);
  });

  it('keeps what HTTP itself refuses on the route: several Host headers (400), an Expect it does not know (417)', async () => {
    const hosts = await refusalOf(
      () =>
        sendRaw(
          server,
          'POST /api/webhook/plain HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
        ),
      'bad_request',
    );
    expect(hosts).toMatchObject({ source: 'plain', contentType: 'application/json', bodyPreview: '{}' });
    expect(hosts.headers.filter(([name]) => name === 'Host')).toHaveLength(2);
    const expect417 = await refusalOf(
      () =>
        sendRaw(
          server,
          'POST /api/webhook/plain HTTP/1.1\r\nHost: x\r\nExpect: something\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
        ),
      'expectation_failed',
    );
    expect(expect417.source).toBe('plain');
  });

  it('keeps a 408 for a body that stops arriving, with what had arrived; a sender that leaves is no refusal', async () => {
    const before = await latestRefusalSeq(server);
    const { answer } = await sendUntilClose(
      server,
      'POST /api/webhook/plain HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"partial":',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    const timedOut = await newestRefusal(server, before);
    expect(timedOut).toMatchObject({
      code: 'request_timeout',
      status: 408,
      source: 'plain',
      size: 100,
      bodyPreview: '{"partial":',
    });
    const left = await latestRefusalSeq(server);
    await sendUntilClose(
      server,
      'POST /api/webhook/plain HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"p":',
      100,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await latestRefusalSeq(server)).toBe(left);
  });

  it('does not keep bytes that never made a request line for the route', async () => {
    const before = await latestRefusalSeq(server);
    const { answer } = await sendUntilClose(server, '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const other = await sendUntilClose(server, 'GET /api/deliveries\u00ff HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(other.answer).toMatch(/^HTTP\/1\.1 400 /);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await latestRefusalSeq(server)).toBe(before);
  });

  it('lists refusals newest first with GET /api/refusals: by source, a page at a time, and needs the token', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = `{"n":${i}}`;
      sent.push(body);
      await send(server, { path: '/api/webhook/paged', headers: json(body), body });
    }
    await newestRefusal(server);
    await server.app.refusals.flush();
    const pages: RefusalJson[][] = [];
    let cursor: string | null = null;
    do {
      const page = await refusalPage(server, `source=paged&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      pages.push(page.items);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((r) => r.bodyPreview)).toEqual([...sent].reverse());
    expect(pages.flat().every((r) => r.source === 'paged' && r.code === 'unknown_source')).toBe(true);

    expect((await fetch(`${server.url}/api/refusals`)).status).toBe(401);
    for (const query of ['cursor=czE', 'limit=0', 'source=..', 'cursor=!']) {
      const res = await fetch(`${server.url}/api/refusals?${query}`, { headers: server.auth });
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_query');
    }
    const spec = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths)).toContain('/api/refusals');
  });
});
