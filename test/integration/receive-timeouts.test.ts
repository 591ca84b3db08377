import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, expectProblem, inboxTotal } from './exchange.js';

const TIMEOUT_MS = 1000;

interface SlowOutcome {
  /** Everything the server wrote before it closed. */
  answer: string;
  /** Milliseconds from the first byte sent to the close. */
  ms: number;
  /** `Date.now()` at the close. */
  closedAt: number;
}

/** Sends `partial` and then nothing more; resolves when the server closes. */
function sendAndStall(server: RunningApp, partial: string): Promise<SlowOutcome> {
  const { port } = new URL(server.url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString('utf8'); });
    socket.on('error', () => { /* a reset after the answer is fine */ });
    socket.on('close', () => {
      const closedAt = Date.now();
      resolve({ answer, ms: closedAt - started, closedAt });
    });
    socket.write(partial);
  });
}

function expectTimeoutProblem(outcome: SlowOutcome): void {
  const split = outcome.answer.indexOf('\r\n\r\n');
  expect(split, outcome.answer).toBeGreaterThan(0);
  const head = outcome.answer.slice(0, split);
  expect(head).toMatch(/^HTTP\/1\.1 408 /);
  const contentType = /\r\ncontent-type:\s*([^\r\n]*)/i.exec(head)?.[1];
  expectProblem(408, contentType, outcome.answer.slice(split + 4), 'request_timeout');
}

/** CONTRACT 1, slow senders: answered 408 request_timeout, and they delay nobody. */
describe('receive: slow senders', () => {
  let server: RunningApp;
  beforeAll(async () => { server = await startApp({ requestTimeoutMs: TIMEOUT_MS, durability: 'relaxed' }); });
  afterAll(async () => { await server.close(); });

  it('answers a body that stops arriving, and a request whose headers never end, with 408 request_timeout; others are not delayed', async () => {
    const before = await inboxTotal(server);
    const slowBody = sendAndStall(server,
      'POST /api/webhook/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":');
    const slowHeaders = sendAndStall(server, 'POST /api/webhook/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl');

    // While both stall, a normal sender goes through: it is done before they are.
    await deliver(server, 'fast', '{"fast":true}');
    const fastDoneAt = Date.now();

    for (const outcome of await Promise.all([slowBody, slowHeaders])) {
      expectTimeoutProblem(outcome);
      expect(outcome.closedAt).toBeGreaterThan(fastDoneAt);
      expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(outcome.ms).toBeLessThan(TIMEOUT_MS * 10);
    }
    expect(await inboxTotal(server)).toBe(before + 1);
  });
});


/** The rest of Node's timeouts (src/app.ts): an idle keep-alive connection, a connection that never sends. */
describe('connection timeouts', () => {
  const REQUEST_MS = 3000;
  let server: RunningApp;
  let quick: RunningApp;
  beforeAll(async () => {
    server = await startApp({ requestTimeoutMs: REQUEST_MS, keepAliveTimeoutMs: 300, durability: 'relaxed' });
    quick = await startApp({ requestTimeoutMs: TIMEOUT_MS, durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
    await quick.close();
  });

  it('closes a keep-alive connection left idle after its answer (keepAliveTimeout), before the request timeout', async () => {
    const body = '{"kept":"alive"}';
    const outcome = await sendAndStall(server, 'POST /api/webhook/idle HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n'
      + `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(outcome.answer).toMatch(/\r\nconnection: keep-alive/i);
    expect(outcome.answer).not.toContain(' 408 ');
    // Node keeps the socket up to a second past keepAliveTimeout (its own margin against races).
    expect(outcome.ms).toBeGreaterThanOrEqual(250);
    expect(outcome.ms).toBeLessThan(REQUEST_MS);
  });

  it('answers a connection that sends nothing at all with 408 or closes it, within the request timeout', async () => {
    const outcome = await sendAndStall(quick, '');
    if (outcome.answer !== '') expectTimeoutProblem(outcome);
    expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(outcome.ms).toBeLessThan(TIMEOUT_MS * 10);
  });
});
