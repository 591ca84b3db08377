import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger, type LogLine } from '../helpers/log-capture.js';
import { listAll, sendUntilClose } from '../helpers/exchange.js';

function post(source: string, body: string, options: { contentType?: string; extra?: string } = {}): string {
  return (
    `POST /api/webhook/${source} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${options.contentType ?? 'application/json'}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${options.extra ?? ''}\r\n${body}`
  );
}

/** The status lines and `connection` headers of every answer in what a server wrote, in order. */
function answers(written: string): Array<{ status: number; connection: string | undefined }> {
  return [...written.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)]
    .map((match) => ({ status: Number(match[1]), connection: /^connection: *(\S+)/im.exec(match[2] ?? '')?.[1]?.toLowerCase() }))
    .filter((answer) => answer.status >= 200);
}

/**
 * HTTP/1.1 pipelining: a client may send its next requests before the
 * answers. Every request whose answer goes out is stored once; one whose
 * answer can never be written (the answer before it closed the connection)
 * is not stored either, so that the sender's retry is not a second copy.
 */
describe('pipelined webhook requests', () => {
  let server: RunningApp;
  let lines: LogLine[];
  beforeAll(async () => {
    const capture = capturingLogger();
    lines = capture.lines;
    server = await startApp({ logger: capture.logger, durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 200 pipelined requests in order in one write, and stores each once', async () => {
    const count = 200;
    const bytes = Array.from({ length: count }, (_, i) =>
      post('pipelined-many', JSON.stringify({ i }), { extra: i === count - 1 ? 'Connection: close\r\n' : '' }),
    ).join('');
    const { answer } = await sendUntilClose(server, bytes);
    const got = answers(answer);
    expect(got).toHaveLength(count);
    expect(got.every((a) => a.status === 200)).toBe(true);
    const ids = [...answer.matchAll(/"id":"([^"]+)"/g)].map((m) => m[1]);
    const stored = await listAll(server, 'pipelined-many');
    expect(stored.map((d) => d.id).sort()).toEqual([...ids].sort());
    // In the order sent: seq follows the request order.
    expect(stored.map((d) => (d.body as { i: number }).i)).toEqual(Array.from({ length: count }, (_, i) => count - 1 - i));
  });

  it('does not store a request pipelined behind a refusal that closes the connection (Expect: 100-continue refused 415)', async () => {
    const bytes =
      post('pipelined-refused', 'not json', { contentType: 'text/plain', extra: 'Expect: 100-continue\r\n' }) +
      post('pipelined-refused', '{"behind":"the refusal"}');
    const { answer } = await sendUntilClose(server, bytes);
    expect(answers(answer)).toEqual([{ status: 415, connection: 'close' }]);
    expect(await listAll(server, 'pipelined-refused')).toEqual([]);
    expect(
      lines.some(
        (l) => l.outcome === 'not_read' && (l.req as { path?: string } | undefined)?.path === '/api/webhook/pipelined-refused',
      ),
    ).toBe(true);
  });

  it('answers and stores a request pipelined behind an accepted Expect: 100-continue request', async () => {
    const bytes =
      post('pipelined-continued', '{"first":true}', { extra: 'Expect: 100-continue\r\n' }) +
      post('pipelined-continued', '{"second":true}', { extra: 'Connection: close\r\n' });
    const { answer } = await sendUntilClose(server, bytes);
    expect(answers(answer).map((a) => a.status)).toEqual([200, 200]);
    expect((await listAll(server, 'pipelined-continued')).map((d) => d.body)).toEqual([{ second: true }, { first: true }]);
  });
});
