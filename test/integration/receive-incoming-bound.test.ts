import { request as httpRequest, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { expectFetchProblem, post } from '../helpers/exchange.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** `reception_incoming_body_bytes` from /metrics. */
async function incomingBytes(server: RunningApp): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^reception_incoming_body_bytes (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

async function waitForIncoming(server: RunningApp, atLeast: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const bytes = await incomingBytes(server);
    if (bytes >= atLeast || Date.now() > deadline) return bytes;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A POST whose body is sent in two parts: `first` now, the rest when `finish` is called. */
function slowPost(server: RunningApp, first: string, rest: string): { req: ClientRequest; finish: () => Promise<number> } {
  const req = httpRequest(`${server.url}/api/webhook/slow`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(first) + Buffer.byteLength(rest) },
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  // A sender destroyed on purpose never finishes: its rejection is not awaited.
  status.catch(() => undefined);
  req.write(first);
  return {
    req,
    finish: async () => {
      req.end(rest);
      return await status;
    },
  };
}

/** CONTRACT 1: 503 when the server cannot take a delivery; here, memory for bodies arriving at once. */
describe('receive: the bound on bodies arriving at once (RECEPTION_INCOMING_MAX_BYTES)', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed', incomingMaxBytes: MiB });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lets one body through alone, refuses others with 503 and Retry-After while it holds the bound, and takes them again after', async () => {
    // 2 MiB of a 3 MiB body, over the 1 MiB bound: alone, it is let through.
    const slow = slowPost(server, `{"pad":"${'x'.repeat(2 * MiB)}`, `${'y'.repeat(MiB)}"}`);
    expect(await waitForIncoming(server, 2 * MiB)).toBeGreaterThanOrEqual(2 * MiB);

    const refused = await post(server, 'other', `{"pad":"${'z'.repeat(100 * KiB)}"}`);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    await expectFetchProblem(refused, 'storage_unavailable');

    expect(await slow.finish()).toBe(200);
    expect(await incomingBytes(server)).toBe(0);
    const taken = await post(server, 'other', `{"pad":"${'z'.repeat(100 * KiB)}"}`);
    expect(taken.status).toBe(200);
    const list = await fetch(`${server.url}/api/deliveries?source=other`, { headers: server.auth });
    expect(((await list.json()) as { items: unknown[] }).items).toHaveLength(1);
  });

  it('gives back what a body held when its sender leaves halfway', async () => {
    const slow = slowPost(server, `{"pad":"${'x'.repeat(MiB)}`, '"}');
    expect(await waitForIncoming(server, MiB)).toBeGreaterThanOrEqual(MiB);
    slow.req.destroy();
    const deadline = Date.now() + 5000;
    while ((await incomingBytes(server)) !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await incomingBytes(server)).toBe(0);
    expect((await post(server, 'after', '{}')).status).toBe(200);
  });
});
