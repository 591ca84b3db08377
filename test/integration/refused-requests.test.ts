import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/platform/observe/metrics.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger, type LogLine } from '../helpers/log-capture.js';
import { expectProblem, firstAnswer, sendUntilClose } from '../helpers/exchange.js';

/** Sends raw bytes and reads the server's first answer; `leaveAfterMs`: the sender closes then. */
async function exchangeRaw(server: RunningApp, bytes: string, leaveAfterMs?: number): Promise<ReturnType<typeof firstAnswer>> {
  return firstAnswer((await sendUntilClose(server, bytes, leaveAfterMs)).answer);
}

async function waitForLine(lines: LogLine[], match: (line: LogLine) => boolean): Promise<LogLine> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const found = lines.find(match);
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(`no such log line among ${lines.length}:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const TIMEOUT_MS = 600;

/**
 * Requests that Node's HTTP parser refuses, and requests whose body never
 * completes: each gets a problem answer where one can still be sent, and
 * exactly one log line that never contains the refused bytes (CONTRACT 1
 * and 5: errors are problems; one log line per request).
 */
describe('refused requests', () => {
  let server: RunningApp;
  let lines: LogLine[];
  const metrics = new Metrics();
  beforeAll(async () => {
    const capture = capturingLogger();
    lines = capture.lines;
    server = await startApp({ logger: capture.logger, metrics, requestTimeoutMs: TIMEOUT_MS, durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers a header value with a control character 400 bad_request as a problem, logged once without the value', async () => {
    const outcome = await exchangeRaw(
      server,
      'POST /api/webhook/evil HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        'X-Evil: before\u0001SECRET-VALUE\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(outcome.status).toBe(400);
    expect(outcome.head).toMatch(/\r\nconnection: close/i);
    expectProblem(400, outcome.contentType, outcome.body, 'bad_request');
    const line = await waitForLine(lines, (l) => l.msg === 'request refused before routing' && l.outcome === 'bad_request');
    expect(line).toMatchObject({
      level: 30,
      status: 400,
      parserError: 'HPE_INVALID_HEADER_TOKEN',
      req: { remoteAddress: '127.0.0.1' },
    });
    expect(lines.filter((l) => l.outcome === 'bad_request')).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain('SECRET-VALUE');
  });

  it('answers a webhook path with raw (not percent-encoded) UTF-8 400 invalid_source, as the contract says of bad source names', async () => {
    const outcome = await exchangeRaw(
      server,
      'POST /api/webhook/caf\u00e9 HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectProblem(400, outcome.contentType, outcome.body, 'invalid_source');
    expect((JSON.parse(outcome.body) as { detail: string }).detail).toMatch(/Percent-encode the source name/);
    const line = await waitForLine(lines, (l) => l.msg === 'request refused before routing' && l.outcome === 'invalid_source');
    expect(line).toMatchObject({ status: 400, parserError: 'HPE_INVALID_URL' });
    // A control character is no name's, percent-encoded or not: the advice says so.
    const tab = await exchangeRaw(
      server,
      'POST /api/webhook/a\tb HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectProblem(400, tab.contentType, tab.body, 'invalid_source');
    expect((JSON.parse(tab.body) as { detail: string }).detail).toMatch(/cannot hold control characters/);
    // Elsewhere the same bytes are not valid HTTP.
    const other = await exchangeRaw(server, 'GET /api/deliveries/caf\u00e9 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expectProblem(400, other.contentType, other.body, 'bad_request');
    // In the query of a webhook path, they are not the source name's fault either.
    for (const query of ['?z=\u007f', '?q=caf\u00e9']) {
      const inQuery = await exchangeRaw(
        server,
        `POST /api/webhook/fine${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      );
      expectProblem(400, inQuery.contentType, inQuery.body, 'bad_request');
    }
  });

  it('answers headers larger than Node accepts 431 headers_too_large as a problem', async () => {
    const outcome = await exchangeRaw(
      server,
      `POST /api/webhook/big HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(outcome.status).toBe(431);
    expectProblem(431, outcome.contentType, outcome.body, 'headers_too_large');
    await waitForLine(
      lines,
      (l) => l.msg === 'request refused before routing' && l.outcome === 'headers_too_large' && l.status === 431,
    );
  });

  it('logs a webhook body that stops arriving once, as 408 request_timeout, and counts it so, not as a failure', async () => {
    const outcome = await exchangeRaw(
      server,
      'POST /api/webhook/stalled HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    );
    expect(outcome.status).toBe(408);
    expectProblem(408, outcome.contentType, outcome.body, 'request_timeout');
    const line = await waitForLine(lines, (l) => l.msg === 'webhook' && l.source === 'stalled');
    expect(line).toMatchObject({ level: 30, status: 408, outcome: 'request_timeout' });
    const aboutIt = lines.filter((l) => l.source === 'stalled' || l.outcome === 'request_timeout');
    expect(aboutIt).toHaveLength(1);
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    const counted = await metrics.deliveries.get();
    const forSource = counted.values.filter((v) => v.labels.source === 'stalled');
    expect(forSource.map((v) => [v.labels.outcome, v.value])).toEqual([['request_timeout', 1]]);
  });

  it('logs a sender that leaves halfway through its body as 499 aborted', async () => {
    const outcome = await exchangeRaw(
      server,
      'POST /api/webhook/leaver HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
      100,
    );
    expect(outcome.status).toBe(0);
    const line = await waitForLine(lines, (l) => l.msg === 'webhook' && l.source === 'leaver');
    expect(line).toMatchObject({ level: 30, status: 499, outcome: 'aborted' });
    expect(lines.filter((l) => l.source === 'leaver')).toHaveLength(1);
  });

  it('answers CONNECT 405 method_not_allowed as a problem, with Allow, instead of closing without a word', async () => {
    const webhook = await exchangeRaw(server, 'CONNECT /api/webhook/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expectProblem(405, webhook.contentType, webhook.body, 'method_not_allowed');
    expect(webhook.head).toMatch(/\r\nallow: POST\r\n/i);
    const proxy = await exchangeRaw(server, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectProblem(405, proxy.contentType, proxy.body, 'method_not_allowed');
    const line = await waitForLine(
      lines,
      (l) => l.msg === 'request refused before routing' && l.outcome === 'method_not_allowed',
    );
    expect(line).toMatchObject({ status: 405, req: { method: 'CONNECT' } });
  });

  it('answers an HTTP/1.1 request without Host, or any with two, 400 bad_request, and an Expect other than 100-continue 417, as problems, logged', async () => {
    const noHost = await exchangeRaw(
      server,
      'POST /api/webhook/nohost HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectProblem(400, noHost.contentType, noHost.body, 'bad_request');
    expect(noHost.head).toMatch(/\r\nconnection: close/i);
    const expectFoo = await exchangeRaw(
      server,
      'POST /api/webhook/expect HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\n' +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectProblem(417, expectFoo.contentType, expectFoo.body, 'expectation_failed');
    await waitForLine(
      lines,
      (l) => l.msg === 'request refused before routing' && l.outcome === 'expectation_failed' && l.status === 417,
    );
    await waitForLine(
      lines,
      (l) =>
        l.msg === 'request refused before routing' &&
        l.outcome === 'bad_request' &&
        (l.req as { method?: string }).method === 'POST',
    );
    const twoHosts = await exchangeRaw(
      server,
      'POST /api/webhook/twohosts HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: example.com\r\n' +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectProblem(400, twoHosts.contentType, twoHosts.body, 'bad_request');
    expect(JSON.parse(twoHosts.body)).toMatchObject({ detail: 'A request carries one Host header, not several.' });
    // HTTP/1.0 has no Host requirement: that webhook is received.
    const old = await exchangeRaw(
      server,
      'POST /api/webhook/http10 HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(old.status, old.body).toBe(200);
  });

  it('answers a transfer coding other than chunked 501 not_implemented, logged, and still takes plain chunked in any case', async () => {
    const chunkedBody = 'Content-Type: application/json\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\n';
    const gzip = await exchangeRaw(
      server,
      `POST /api/webhook/tecoding HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n${chunkedBody}`,
    );
    expectProblem(501, gzip.contentType, gzip.body, 'not_implemented');
    expect(gzip.head).toMatch(/\r\nconnection: close/i);
    const line = await waitForLine(lines, (l) => l.msg === 'request refused before routing' && l.outcome === 'not_implemented');
    expect(line).toMatchObject({ status: 501, req: { method: 'POST' } });
    // Two Transfer-Encoding lines are one list to HTTP ("chunked, chunked"): refused too, not stored.
    const twice = await exchangeRaw(
      server,
      `POST /api/webhook/tecoding HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n${chunkedBody}`,
    );
    expect([400, 501]).toContain(twice.status);
    const plain = await exchangeRaw(
      server,
      `POST /api/webhook/tecoding HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n${chunkedBody}`,
    );
    expect(plain.status, plain.body).toBe(200);
    const stored = await fetch(`${server.url}/api/deliveries?source=tecoding`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(((await stored.json()) as { items: unknown[] }).items).toHaveLength(1);
  });

  it('refuses a request on a kept-alive connection after an answered one (431 headers too large), and stays up', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /api/webhook/keptalive HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    const deadline = Date.now() + 3000;
    while (!/\r\n\r\n\{[^}]*\}/.test(received)) {
      if (Date.now() > deadline) throw new Error(`no answer to the first request: ${received}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(firstAnswer(received).status).toBe(200);
    // The connection is idle now; the next request's headers overflow Node's limit.
    const first = received;
    socket.write(`POST /api/webhook/keptalive HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await closed;
    const second = firstAnswer(received.slice(first.length));
    expectProblem(431, second.contentType, second.body, 'headers_too_large');
    await waitForLine(lines, (l) => l.msg === 'request refused before routing' && l.outcome === 'headers_too_large');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('logs a body that breaks HTTP halfway (a bad chunk size) with the 400 its sender got, not as 499', async () => {
    const outcome = await exchangeRaw(
      server,
      'POST /api/webhook/badchunk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n2\r\n{"\r\nzz\r\n',
    );
    expectProblem(400, outcome.contentType, outcome.body, 'bad_request');
    const line = await waitForLine(lines, (l) => l.msg === 'webhook' && l.source === 'badchunk');
    expect(line).toMatchObject({ status: 400, outcome: 'bad_request' });
    expect(lines.filter((l) => l.source === 'badchunk')).toHaveLength(1);
  });

  it('answers a whole webhook followed by bytes that are not HTTP: 200 for the delivery it stored, then 400 for the rest, then the close', async () => {
    const body = '{"then":"junk"}';
    const { answer } = await sendUntilClose(
      server,
      'POST /api/webhook/thenjunk HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}X`,
    );
    const first = firstAnswer(answer);
    expect(first.status, answer).toBe(200);
    const receipt = JSON.parse(first.body.slice(0, first.body.indexOf('}') + 1)) as { id: string };
    const stored = await fetch(`${server.url}/api/deliveries/${receipt.id}/raw`, { headers: server.auth });
    expect(await stored.text()).toBe(body);
    const second = firstAnswer(answer.slice(answer.indexOf('HTTP/1.1', 1)));
    expect(second.status).toBe(400);
    expectProblem(400, second.contentType, second.body, 'bad_request');
    const line = await waitForLine(lines, (l) => l.msg === 'webhook' && l.source === 'thenjunk');
    expect(line).toMatchObject({ status: 200, outcome: 'stored' });
    await waitForLine(lines, (l) => l.msg === 'request refused before routing' && l.parserError === 'HPE_INVALID_METHOD');
  });
});
