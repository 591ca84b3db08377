import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { problemFor, type ProblemCode } from '../../src/platform/errors/problem-catalogue.js';
import type { Static } from 'typebox';
import type { DeliveryPageSchema, DeliverySchema, ReceivedSchema, SourceListSchema } from '../../src/api/schemas.js';
import type { RunningApp } from './app.js';

/**
 * Talking to a running app over real HTTP on loopback, with full control of
 * what goes on the wire (raw paths, header order, no body at all, chunked
 * bodies) where `fetch` would normalise it.
 */

export interface Exchange {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  text: string;
}

export interface SendOptions {
  method?: string;
  /** The request target exactly as written on the wire, e.g. `/api/webhook/%2F`. */
  path: string;
  /** An object keeps its insertion order on the wire. */
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
}

/** One request with `node:http`, no keep-alive; the path is sent as given. */
export function send(server: Pick<RunningApp, 'url'>, options: SendOptions): Promise<Exchange> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: options.method ?? 'POST',
        path: options.path,
        headers: options.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body,
            text: body.toString('utf8'),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Writes a request by hand on a plain TCP socket and reads the answer up to
 * the server's close. For requests `node:http` cannot express, such as a
 * POST without Content-Length and without Transfer-Encoding.
 */
export function sendRaw(server: Pick<RunningApp, 'url'>, head: string): Promise<Exchange> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      if (split === -1) {
        reject(new Error(`no complete answer: ${all.toString('latin1')}`));
        return;
      }
      const lines = all.subarray(0, split).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers: IncomingHttpHeaders = {};
      const rawHeaders: string[] = [];
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon);
        const value = line.slice(colon + 1).trim();
        rawHeaders.push(name, value);
        headers[name.toLowerCase()] = value;
      }
      const body = all.subarray(split + 4);
      resolve({ status, headers, rawHeaders, body, text: body.toString('utf8') });
    });
    socket.end(head);
  });
}

export interface ClosedExchange {
  /** Everything the server wrote before the connection closed. */
  answer: string;
  /** Milliseconds from the first byte sent to the close. */
  ms: number;
  /** `Date.now()` at the close. */
  closedAt: number;
}

/**
 * Writes `bytes` on a plain socket and sends nothing more; resolves when the
 * connection closes, with what the server wrote. `leaveAfterMs`: the sender
 * itself closes the connection then.
 */
export function sendUntilClose(server: Pick<RunningApp, 'url'>, bytes: string, leaveAfterMs?: number): Promise<ClosedExchange> {
  const { port } = new URL(server.url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
    });
    socket.on('error', () => {
      /* a reset after the answer is fine */
    });
    socket.on('close', () => {
      const closedAt = Date.now();
      resolve({ answer, ms: closedAt - started, closedAt });
    });
    socket.write(bytes);
    if (leaveAfterMs !== undefined) setTimeout(() => socket.destroy(), leaveAfterMs);
  });
}

/** The status, head and body of the first answer in what a server wrote (status 0: none). */
export function firstAnswer(written: string): { status: number; head: string; contentType: string | undefined; body: string } {
  const split = written.indexOf('\r\n\r\n');
  const head = split === -1 ? written : written.slice(0, split);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
    head,
    contentType: /\r\ncontent-type:\s*([^\r\n]*)/i.exec(head)?.[1],
    body: split === -1 ? '' : written.slice(split + 4),
  };
}

/** A webhook POST through `fetch`, to an app in this process or a server process (anything with its URL). */
export async function post(
  server: Pick<RunningApp, 'url'>,
  source: string,
  body: string | Buffer,
  contentType = 'application/json',
): Promise<Response> {
  return fetch(`${server.url}/api/webhook/${encodeURIComponent(source)}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
}

/** The answers, typed from the API's own schemas: a schema change breaks the tests' compile. */
export type Receipt = Static<typeof ReceivedSchema>;

/** Posts and insists on 200; answers the receipt. */
export async function deliver(
  server: Pick<RunningApp, 'url'>,
  source: string,
  body: string | Buffer,
  contentType = 'application/json',
): Promise<Receipt> {
  const res = await post(server, source, body, contentType);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Receipt;
}

export type DeliveryView = Static<typeof DeliverySchema>;

export type DeliveryPage = Static<typeof DeliveryPageSchema>;

/** GET with the API token; insists on 200 and answers the parsed JSON. */
export async function readJson<T>(server: RunningApp, path: string): Promise<T> {
  const res = await fetch(`${server.url}${path}`, { headers: server.auth });
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBe(200);
  return JSON.parse(text) as T;
}

export function readDelivery(server: RunningApp, id: string): Promise<DeliveryView> {
  return readJson<DeliveryView>(server, `/api/deliveries/${encodeURIComponent(id)}`);
}

export type SourcePage = Static<typeof SourceListSchema>;

export type SourceView = SourcePage['items'][number];

/** Every source, by walking the pages of `GET /api/sources` (with `query`, such as `q=…`). */
export async function allSources(server: RunningApp, query = ''): Promise<SourceView[]> {
  const all: SourceView[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams(query);
    params.set('limit', '500');
    if (cursor !== null) params.set('cursor', cursor);
    const page: SourcePage = await readJson<SourcePage>(server, `/api/sources?${params.toString()}`);
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}

/** How many deliveries the whole inbox holds, as the read API tells it. */
export async function inboxTotal(server: RunningApp): Promise<number> {
  return (await allSources(server)).reduce((sum, s) => sum + s.count, 0);
}

/** Every delivery of the inbox (or of one source), newest first, by walking the pages. */
export async function listAll(server: RunningApp, source?: string): Promise<DeliveryView[]> {
  const all: DeliveryView[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ limit: '500' });
    if (source !== undefined) params.set('source', source);
    if (cursor !== null) params.set('cursor', cursor);
    const page: DeliveryPage = await readJson<DeliveryPage>(server, `/api/deliveries?${params.toString()}`);
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}

/** The media type of a Content-Type value, without parameters, lower case. */
export function essence(contentType: string | undefined | null): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Asserts an RFC 9457 problem answer with the catalogue's code, status,
 * type and title, a useful detail, and nothing from inside the server.
 */
export function expectProblem(status: number, contentType: string | undefined | null, text: string, code: ProblemCode): void {
  const context = `${status} ${text}`;
  expect(essence(contentType), context).toBe('application/problem+json');
  const expected = problemFor(code, '');
  expect(status, context).toBe(expected.status);
  const problem = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(problem).sort()).toEqual(['code', 'detail', 'status', 'title', 'type']);
  expect(problem.code).toBe(code);
  expect(problem.status).toBe(expected.status);
  expect(problem.type).toBe(expected.type);
  expect(problem.title).toBe(expected.title);
  expect(typeof problem.detail).toBe('string');
  expect(String(problem.detail).length).toBeGreaterThan(0);
  expect(String(problem.detail)).not.toMatch(/\n\s+at |\/work\/|node_modules|\.ts:\d/);
}

export async function expectFetchProblem(res: Response, code: ProblemCode): Promise<void> {
  expectProblem(res.status, res.headers.get('content-type'), await res.text(), code);
}

export function expectExchangeProblem(exchange: Exchange, code: ProblemCode): void {
  const contentType = exchange.headers['content-type'];
  expectProblem(exchange.status, typeof contentType === 'string' ? contentType : undefined, exchange.text, code);
}

/** RFC 3339, UTC, with milliseconds. */
export const RFC3339_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
