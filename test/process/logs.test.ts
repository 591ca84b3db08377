import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ServerProcess } from '../helpers/server-process.js';
import { RawConnection } from '../helpers/raw-http.js';

import { API_TOKEN, ServerChildren, sleep, withTimeout } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

/**
 * Logs are JSON lines on stdout: exactly one line per request, each line
 * parses on its own whatever the request carried, and neither bodies,
 * query strings nor credentials ever reach them.
 */

interface LogLine {
  level: number;
  time: string;
  msg: string;
  status?: number;
  source?: string;
  req?: { method?: string; path?: string; remoteAddress?: string };
}

const SECRET = 'S3CRET-body-marker-7f3a';
const QUERY_SECRET = 'S3CRET-query-marker-91bc';
const WRONG_TOKEN = 'wrong-token-that-is-long-enough-4d2e';
const COOKIE = 'session=S3CRET-cookie-marker-55aa';
const SENDER_AUTH = 'Basic c2VuZGVyOlMzQ1JFVC1wYXNzd29yZA==';

const children = new ServerChildren();
let server: ServerProcess;
/** Requests made so far; each must have exactly one log line. */
let requests = 0;

beforeAll(async () => {
  server = await children.start({
    RECEPTION_DATA: children.dataDir(),
    RECEPTION_TOKEN: API_TOKEN,
    RECEPTION_MAX_BODY_BYTES: '4096',
  });
});
afterAll(async () => {
  await children.cleanup();
});

async function send(path: string, init: RequestInit = {}): Promise<number> {
  requests += 1;
  const res = await fetch(`${server.url}${path}`, init);
  await res.arrayBuffer();
  return res.status;
}

function postJson(path: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return send(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

/** Sends raw bytes (header values that `fetch` refuses) and returns the status. */
async function sendRaw(head: Buffer, body: Buffer): Promise<number | undefined> {
  requests += 1;
  const connection = await RawConnection.open(server.url);
  await connection.write(Buffer.concat([head, body]));
  const answer = await withTimeout(connection.response(), 5000, 'no answer');
  connection.destroy();
  return answer?.status;
}

/** Every stdout line parsed; fails on a line that is not a JSON object. */
function parsedLogs(): LogLine[] {
  return server.logs.map((line) => {
    const parsed = JSON.parse(line) as unknown;
    expect(typeof parsed, line).toBe('object');
    return parsed as LogLine;
  });
}

const requestLines = (): LogLine[] => parsedLogs().filter((line) => line.status !== undefined && line.req !== undefined);

/** Waits until every request so far has its line, then a little longer to catch extra lines. */
async function settledRequestLines(): Promise<LogLine[]> {
  await eventually(
    () => server.logs.filter((line) => line.includes('"status":')).length >= requests,
    5000,
    `expected ${requests} request lines, got: ${server.logs.join('\n')}`,
  );
  await sleep(150);
  return requestLines();
}

describe('request logs', () => {
  it('write one parseable JSON line per request, even for hostile source names', async () => {
    const hostile = 'quo"te\u2028sep\u2029\'{}\\ ✓ 😀 <script>';
    expect(await postJson(`/api/webhook/${encodeURIComponent(hostile)}`, '{"a":1}')).toBe(200);
    // Percent-encoded newlines and a forged log line: refused, and the forgery stays inside one line.
    const forged = '\n{"level":60,"msg":"forged"}\r\n';
    expect(await postJson(`/api/webhook/x${encodeURIComponent(forged)}`, '{"a":1}')).toBe(400);
    expect(
      await send(`/api/deliveries/${encodeURIComponent(forged)}`, { headers: { authorization: `Bearer ${API_TOKEN}` } }),
    ).toBeGreaterThanOrEqual(400);
    expect(await send(`/no/such/${encodeURIComponent(hostile)}`)).toBe(404);
    // Paths that the router itself refuses (a bad escape, an over-long id) get their line too.
    expect(await send('/api/deliveries/%zz%0A', { headers: { authorization: `Bearer ${API_TOKEN}` } })).toBe(404);
    expect(await send(`/api/deliveries/${'y'.repeat(1001)}`)).toBe(401);

    const lines = await settledRequestLines();
    expect(lines).toHaveLength(requests);
    expect(lines.some((line) => line.source === hostile)).toBe(true);
    // The source's U+2028 and U+2029 are escaped: a reader that splits lines on them (Node 24's readline) sees one line.
    expect(server.logs.filter((line) => /[\u2028\u2029]/.test(line))).toEqual([]);
    expect(parsedLogs().some((line) => line.msg === 'forged' || line.level === 60)).toBe(false);
    for (const line of lines) {
      expect(typeof line.time).toBe('string');
      expect(typeof line.req?.path, JSON.stringify(line)).toBe('string');
      expect(line.req?.remoteAddress, JSON.stringify(line)).toBe('127.0.0.1');
    }
  });

  it('stay one line per request with unicode, U+2028 and 5 KB header values', async () => {
    const body = Buffer.from('{"headers":"hostile"}');
    const head = Buffer.concat([
      Buffer.from('POST /api/webhook/headers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n'),
      Buffer.from(`X-Unicode: caf\u00e9 \u2028 line\u2029sep \u{1F600} "quoted" \\ {}\r\n`, 'utf8'),
      Buffer.from(`X-Big: ${'b'.repeat(5 * 1024)}\r\n`),
      Buffer.from(`Content-Length: ${body.length}\r\n\r\n`),
    ]);
    expect(await sendRaw(head, body)).toBe(200);
    const bigHead = Buffer.from(
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'c'.repeat(5 * 1024)}\r\n` + 'X-Line-Sep: \u2028\r\n\r\n',
      'utf8',
    );
    expect(await sendRaw(bigHead, Buffer.alloc(0))).toBe(200);

    const lines = await settledRequestLines();
    expect(lines).toHaveLength(requests);
    // Header values are not logged at all: the 5 KB value does not bloat the lines.
    expect(server.logs.filter((line) => line.includes('b'.repeat(100)) || line.includes('c'.repeat(100)))).toEqual([]);
  });

  it('never contain a body, a query string or a credential, whatever the answer', async () => {
    const marker = { secret: SECRET, nested: { also: SECRET } };
    const bearer = { authorization: `Bearer ${API_TOKEN}` };
    const statuses = [
      await postJson(`/api/webhook/bodies?key=${QUERY_SECRET}`, JSON.stringify(marker), {
        authorization: SENDER_AUTH,
        cookie: COOKIE,
      }),
      await postJson('/api/webhook/bodies', `{"secret":"${SECRET}"`),
      await postJson('/api/webhook/bodies', `["${SECRET}"]`),
      await postJson('/api/webhook/bodies', `{"secret":"${SECRET}","pad":"${'p'.repeat(5000)}"}`),
      await send('/api/webhook/bodies', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: SECRET }),
      await send('/api/webhook/bodies', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `secret=${SECRET}&bad=%zz`,
      }),
      await send('/api/webhook/bodies', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `secret=${SECRET}`,
      }),
      await send(`/api/deliveries?limit=5&cursor=${QUERY_SECRET}`, { headers: bearer }),
      await send('/api/deliveries', { headers: { authorization: `Bearer ${WRONG_TOKEN}` } }),
      await send('/api/deliveries', { headers: { ...bearer, cookie: COOKIE } }),
      await send('/api/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: WRONG_TOKEN }),
      }),
      await send('/api/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: API_TOKEN }),
      }),
    ];
    expect(statuses).toEqual([200, 400, 422, 413, 415, 400, 200, 400, 401, 200, 401, 204]);

    const lines = await settledRequestLines();
    expect(lines).toHaveLength(requests);
    for (const secret of [SECRET, QUERY_SECRET, API_TOKEN, WRONG_TOKEN, COOKIE, 'S3CRET-cookie', SENDER_AUTH, 'c2VuZGVy']) {
      expect(
        server.logs.filter((line) => line.includes(secret)),
        secret,
      ).toEqual([]);
    }
  });
});
