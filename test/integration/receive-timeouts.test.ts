import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, expectProblem, firstAnswer, inboxTotal, sendUntilClose, type ClosedExchange } from '../helpers/exchange.js';

const TIMEOUT_MS = 1000;

function expectTimeoutProblem(outcome: ClosedExchange): void {
  const { status, contentType, body } = firstAnswer(outcome.answer);
  expect(status, outcome.answer).toBe(408);
  expectProblem(408, contentType, body, 'request_timeout');
}

/** CONTRACT 1, slow senders: answered 408 request_timeout, and they delay nobody. */
describe('receive: slow senders', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ requestTimeoutMs: TIMEOUT_MS, durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers a body that stops arriving, and a request whose headers never end, with 408 request_timeout; others are not delayed', async () => {
    const before = await inboxTotal(server);
    const slowBody = sendUntilClose(
      server,
      'POST /api/webhook/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    );
    const slowHeaders = sendUntilClose(server, 'POST /api/webhook/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl');

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
    const outcome = await sendUntilClose(
      server,
      'POST /api/webhook/idle HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n' +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(outcome.answer).toMatch(/\r\nconnection: keep-alive/i);
    expect(outcome.answer).not.toContain(' 408 ');
    // Node keeps the socket up to a second past keepAliveTimeout (its own margin against races).
    expect(outcome.ms).toBeGreaterThanOrEqual(250);
    expect(outcome.ms).toBeLessThan(REQUEST_MS);
  });

  it('answers a connection that sends nothing at all with 408 or closes it, within the request timeout', async () => {
    const outcome = await sendUntilClose(quick, '');
    if (outcome.answer !== '') expectTimeoutProblem(outcome);
    expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(outcome.ms).toBeLessThan(TIMEOUT_MS * 10);
  });
});
