import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/platform/config/settings.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { RawConnection, postHead, type RawResponse } from '../helpers/raw-http.js';
import { API_TOKEN, ServerChildren, childrenOf, sleep } from '../helpers/server-children.js';

/**
 * CONTRACT 1, slow senders: a request whose headers and body have not fully
 * arrived within the request timeout (30 s by default, here
 * RECEPTION_REQUEST_TIMEOUT_MS=2000) is answered 408 request_timeout or
 * closed, and slow senders never delay others. Real process, real sockets.
 */

const TIMEOUT_MS = 2000;
/** How late after the timeout the cut may come (Node checks connections on an interval; CI is slow). */
const SLACK_MS = 2000;
const auth = { authorization: `Bearer ${API_TOKEN}` };

interface Trickled {
  /** The 408 answer, or undefined when the server just closed. */
  answer: RawResponse | undefined;
  /** From the first byte sent to the close. */
  ms: number;
}

/** Sends `head`, then one piece of `drip` every `everyMs` until the server closes or `maxMs` passes. */
async function trickle(
  server: ServerProcess,
  head: string,
  drip: (i: number) => string,
  everyMs: number,
  maxMs: number,
): Promise<Trickled> {
  const connection = await RawConnection.open(server.url);
  const started = performance.now();
  await connection.write(head);
  for (let i = 0; !connection.isClosed && performance.now() - started < maxMs; i++) {
    await sleep(everyMs);
    await connection.write(drip(i));
  }
  const answer = await connection.response();
  const closedAt = await connection.closed;
  connection.destroy();
  return { answer, ms: closedAt - started };
}

function expectTimedOut(outcome: Trickled): void {
  if (outcome.answer !== undefined) {
    expect(outcome.answer.status).toBe(408);
    expect(outcome.answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((JSON.parse(outcome.answer.body) as { code?: string }).code).toBe('request_timeout');
  }
  expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  expect(outcome.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
}

async function postJson(
  server: ServerProcess,
  source: string,
  body: string,
): Promise<{ status: number; ms: number; doneAt: number }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/api/webhook/${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  await res.arrayBuffer();
  const doneAt = performance.now();
  return { status: res.status, ms: doneAt - started, doneAt };
}

async function sourcesCount(server: ServerProcess): Promise<Record<string, number>> {
  const res = await fetch(`${server.url}/api/sources`, { headers: auth });
  expect(res.status).toBe(200);
  const { items } = (await res.json()) as { items: Array<{ source: string; count: number }> };
  return Object.fromEntries(items.map((item) => [item.source, item.count]));
}

describe.concurrent(`slow senders (RECEPTION_REQUEST_TIMEOUT_MS=${TIMEOUT_MS} unless said otherwise)`, () => {
  const children = new ServerChildren();
  let server: ServerProcess;
  beforeAll(async () => {
    server = await children.start({
      RECEPTION_DATA: children.dataDir(),
      RECEPTION_TOKEN: API_TOKEN,
      RECEPTION_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
    });
  });
  afterAll(async () => {
    await children.cleanup();
  });

  it('cuts senders that trickle headers or body within the bound, while others are answered at once', async () => {
    const slowStarted = performance.now();
    const slowHeaders = Array.from({ length: 8 }, () =>
      trickle(
        server,
        'POST /api/webhook/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n',
        (i) => `X-Drip-${i}: ${'h'.repeat(10)}\r\n`,
        100,
        TIMEOUT_MS + SLACK_MS + 1000,
      ),
    );
    const body = `{"slow":"${'b'.repeat(500)}"}`;
    const slowBodies = Array.from({ length: 8 }, () =>
      trickle(server, postHead('/api/webhook/slow', body.length), (i) => body.charAt(i), 100, TIMEOUT_MS + SLACK_MS + 1000),
    );

    // While 16 connections trickle, other senders go through one after another.
    const fast: Array<{ status: number; ms: number; doneAt: number }> = [];
    await sleep(100);
    while (performance.now() - slowStarted < TIMEOUT_MS * 0.6) {
      fast.push(await postJson(server, 'fast', `{"n":${fast.length}}`));
    }
    const outcomes = await Promise.all([...slowHeaders, ...slowBodies]);

    expect(fast.length).toBeGreaterThanOrEqual(5);
    expect(fast.map((f) => f.status)).toEqual(fast.map(() => 200));
    const slowest = Math.max(...fast.map((f) => f.ms));
    // "Quickly": each well under the timeout, and all done before the first trickler was cut.
    expect(slowest).toBeLessThan(TIMEOUT_MS / 2);
    const firstCut = slowStarted + Math.min(...outcomes.map((o) => o.ms));
    expect(Math.max(...fast.map((f) => f.doneAt))).toBeLessThan(firstCut);
    for (const outcome of outcomes) expectTimedOut(outcome);
    const answered = outcomes.filter((o) => o.answer !== undefined).length;

    const counts = await sourcesCount(server);
    expect(counts.fast).toBe(fast.length);
    expect(counts.slow).toBeUndefined();
    console.info(
      `[slow-sender] ${fast.length} fast answers, slowest ${Math.round(slowest)} ms; ` +
        `16 tricklers cut after ${Math.round(Math.min(...outcomes.map((o) => o.ms)))}..` +
        `${Math.round(Math.max(...outcomes.map((o) => o.ms)))} ms, ${answered} with a 408`,
    );
  });

  it('answers 200 to a slow sender whose request completes within the timeout', async () => {
    const body = `{"steady":"${'s'.repeat(20)}"}`;
    const connection = await RawConnection.open(server.url);
    const started = performance.now();
    await connection.write(postHead('/api/webhook/steady', body.length));
    // About 1.2 s in all: each piece is far apart, the whole is within 2 s.
    for (let i = 0; i < body.length; i += 3) {
      await sleep(1200 / Math.ceil(body.length / 3));
      await connection.write(body.slice(i, i + 3));
    }
    const answer = await connection.response();
    connection.destroy();
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(answer?.status).toBe(200);
    const { id } = JSON.parse(answer?.body ?? '{}') as { id?: string };
    const raw = await fetch(`${server.url}/api/deliveries/${id ?? ''}/raw`, { headers: auth });
    expect(await raw.text()).toBe(body);
  });

  it('is 30 s by default in the settings', ({ expect }) => {
    expect(loadSettings({}).requestTimeoutMs).toBe(30_000);
    expect(loadSettings({ RECEPTION_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) }).requestTimeoutMs).toBe(TIMEOUT_MS);
  });

  it('is longer by default: a real process without the variable lets a sender take more than that', async (context) => {
    const { expect } = context;
    const children = childrenOf(context);
    const server = await children.start({ RECEPTION_DATA: children.dataDir(), RECEPTION_TOKEN: API_TOKEN });
    const body = '{"patient":true}';
    const connection = await RawConnection.open(server.url);
    const started = performance.now();
    await connection.write(postHead('/api/webhook/patient', body.length));
    await connection.write(body.slice(0, 5));
    await sleep(TIMEOUT_MS + 800);
    expect(connection.isClosed).toBe(false);
    await connection.write(body.slice(5));
    const answer = await connection.response();
    connection.destroy();
    expect(performance.now() - started).toBeGreaterThan(TIMEOUT_MS + 500);
    expect(answer?.status).toBe(200);
  });
});
