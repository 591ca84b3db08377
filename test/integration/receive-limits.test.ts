import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, expectFetchProblem, expectProblem, inboxTotal, listAll, post, readDelivery } from '../helpers/exchange.js';

const MiB = 1024 * 1024;
const LIMIT = 5 * MiB;

/** A JSON object of exactly `size` bytes. */
function jsonOfSize(size: number): Buffer {
  const head = '{"pad":"';
  const tail = '"}';
  return Buffer.from(head + 'x'.repeat(size - head.length - tail.length) + tail);
}

/**
 * POSTs with `Expect: 100-continue` to /api/webhook/continue: the body is
 * sent only if the server answers `100 Continue`; else the final answer
 * comes first and the body is never sent.
 */
function askToContinue(
  server: RunningApp,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ continued: boolean; status: number; contentType: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = httpRequest(`${server.url}/api/webhook/continue`, {
      method: 'POST',
      headers: { ...headers, expect: '100-continue' },
    });
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        resolve({ continued, status: res.statusCode ?? 0, contentType: res.headers['content-type'], text });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
    req.flushHeaders();
  });
}

/** `{"a":{"a":…{}…}}` with `levels` nested objects. */
function nestedObjects(levels: number): string {
  return '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
}

interface StreamedAnswer {
  status: number;
  contentType: string | undefined;
  text: string;
  /** Bytes handed to the socket when the answer's head arrived. */
  sentWhenAnswered: number;
  /** Whether `end()` had been called when the answer's head arrived. */
  endedWhenAnswered: boolean;
}

/**
 * Streams a large body in 64 KiB chunks, honouring back-pressure, and stops
 * as soon as the answer arrives. Write-side EPIPE/ECONNRESET after the
 * server closed its end are expected and ignored.
 */
function streamBody(server: RunningApp, path: string, total: number, headers: Record<string, string>): Promise<StreamedAnswer> {
  const { port } = new URL(server.url);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let ended = false;
    let answered: IncomingMessage | undefined;
    let sentWhenAnswered = 0;
    let endedWhenAnswered = false;
    const req = httpRequest({ host: '127.0.0.1', port: Number(port), method: 'POST', path, headers, agent: false }, (res) => {
      answered = res;
      sentWhenAnswered = sent;
      endedWhenAnswered = ended;
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('error', reject);
      res.on('end', () => {
        const contentType = res.headers['content-type'];
        resolve({
          status: res.statusCode ?? 0,
          contentType,
          text: Buffer.concat(chunks).toString('utf8'),
          sentWhenAnswered,
          endedWhenAnswered,
        });
        req.destroy();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (answered !== undefined && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      reject(error);
    });
    const pump = (): void => {
      while (answered === undefined && !req.destroyed) {
        if (sent >= total) {
          ended = true;
          req.end();
          return;
        }
        const piece = total - sent < chunk.length ? chunk.subarray(0, total - sent) : chunk;
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

describe('receive: size and depth limits', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it('accepts a body of exactly 5 MiB and keeps every byte', async () => {
    const body = jsonOfSize(LIMIT);
    const { id } = await deliver(server, 'big', body);
    const delivery = await readDelivery(server, id);
    expect(delivery.size).toBe(LIMIT);
    const raw = Buffer.from(
      await (await fetch(`${server.url}/api/deliveries/${id}/raw`, { headers: server.auth })).arrayBuffer(),
    );
    expect(raw.equals(body)).toBe(true);
  });

  it('takes a form of 10,000 fields and refuses one of 10,001 as payload_too_large, storing nothing', async () => {
    const form = (fields: number): string => Array.from({ length: fields }, (_, i) => `f${i}=${i}`).join('&');
    const { id } = await deliver(server, 'fields', form(10_000), 'application/x-www-form-urlencoded');
    expect(Object.keys((await readDelivery(server, id)).body as object)).toHaveLength(10_000);
    const before = await inboxTotal(server);
    await expectFetchProblem(
      await post(server, 'fields', form(10_001), 'application/x-www-form-urlencoded'),
      'payload_too_large',
    );
    expect(await inboxTotal(server)).toBe(before);
  });

  it('refuses 5 MiB + 1 byte with Content-Length', async () => {
    const before = await inboxTotal(server);
    await expectFetchProblem(await post(server, 'big', jsonOfSize(LIMIT + 1)), 'payload_too_large');
    expect(await inboxTotal(server)).toBe(before);
  });

  it('answers 413 from the Content-Length alone, before the client has sent the body', async () => {
    const before = await inboxTotal(server);
    const total = 64 * MiB;
    const answer = await streamBody(server, '/api/webhook/big', total, {
      'content-type': 'application/json',
      'content-length': String(total),
    });
    expectProblem(answer.status, answer.contentType, answer.text, 'payload_too_large');
    expect(answer.endedWhenAnswered).toBe(false);
    expect(answer.sentWhenAnswered).toBeLessThan(total);
    expect(await inboxTotal(server)).toBe(before);
  });

  it('with Expect: 100-continue, refuses by Content-Length or media type without asking for the body, and asks for an acceptable one', async () => {
    const before = await inboxTotal(server);
    const big = await askToContinue(
      server,
      { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) },
      jsonOfSize(LIMIT + 1),
    );
    expect(big.continued).toBe(false);
    expectProblem(big.status, big.contentType, big.text, 'payload_too_large');
    // A Content-Length past 2^53 (up to 2^64 - 1) is refused the same way, not taken as unknown.
    for (const length of ['9007199254740992', '18446744073709551615']) {
      const huge = await askToContinue(
        server,
        { 'content-type': 'application/json', 'content-length': length },
        Buffer.from('{}'),
      );
      expect(huge.continued, length).toBe(false);
      expectProblem(huge.status, huge.contentType, huge.text, 'payload_too_large');
    }
    const xml = await askToContinue(server, { 'content-type': 'application/xml', 'content-length': '7' }, Buffer.from('<a></a>'));
    expect(xml.continued).toBe(false);
    expectProblem(xml.status, xml.contentType, xml.text, 'unsupported_media_type');
    expect(await inboxTotal(server)).toBe(before);

    const body = Buffer.from('{"expect":"continue"}');
    const ok = await askToContinue(server, { 'content-type': 'application/json', 'content-length': String(body.length) }, body);
    expect(ok.continued).toBe(true);
    expect(ok.status, ok.text).toBe(200);
    const { id } = JSON.parse(ok.text) as { id: string };
    expect((await readDelivery(server, id)).body).toEqual({ expect: 'continue' });
  });

  it('answers 413 to a chunked body as soon as it passes the limit, while the client is still sending', async () => {
    const before = await inboxTotal(server);
    const total = 64 * MiB;
    const answer = await streamBody(server, '/api/webhook/big', total, {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expectProblem(answer.status, answer.contentType, answer.text, 'payload_too_large');
    expect(answer.endedWhenAnswered).toBe(false);
    // The server saw more than the limit, but answered long before the end.
    expect(answer.sentWhenAnswered).toBeGreaterThan(LIMIT);
    expect(answer.sentWhenAnswered).toBeLessThan(total);
    expect(await inboxTotal(server)).toBe(before);
  });

  it('keeps serving after refusing a large body', async () => {
    const { id } = await deliver(server, 'after-big', '{"ok":true}');
    expect((await readDelivery(server, id)).body).toEqual({ ok: true });
  });

  it('accepts JSON nested exactly 1000 levels deep and reads it back', async () => {
    const body = nestedObjects(1000);
    const { id } = await deliver(server, 'deep', body);
    const delivery = await readDelivery(server, id);
    let level: unknown = delivery.body;
    let depth = 0;
    while (typeof level === 'object' && level !== null) {
      depth++;
      level = (level as Record<string, unknown>).a;
    }
    expect(depth).toBe(1000);
  });

  it('accepts arrays inside an object up to 1000 levels in all', async () => {
    const body = '{"a":' + '['.repeat(999) + ']'.repeat(999) + '}';
    await deliver(server, 'deep', body);
  });

  it('refuses JSON nested 1001 levels deep with invalid_json', async () => {
    const before = (await listAll(server, 'deep')).length;
    await expectFetchProblem(await post(server, 'deep', nestedObjects(1001)), 'invalid_json');
    await expectFetchProblem(await post(server, 'deep', '{"a":' + '['.repeat(1000) + ']'.repeat(1000) + '}'), 'invalid_json');
    expect((await listAll(server, 'deep')).length).toBe(before);
  });

  it('does not count brackets inside strings as depth', async () => {
    const body = JSON.stringify({ text: '{'.repeat(5000) + '['.repeat(5000), quoted: '\\"{{{{' });
    const { id } = await deliver(server, 'deep', body);
    expect((await readDelivery(server, id)).body).toEqual(JSON.parse(body));
  });

  it('refuses very deep JSON without crashing the server', async () => {
    await expectFetchProblem(await post(server, 'deep', '['.repeat(200_000)), 'invalid_json');
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
