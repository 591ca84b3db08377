import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transformDefinitions, transformUsers } from '../../src/config/transform-config.js';
import type { ConfigFile } from '../../src/config/source-config-schema.js';
import { startWithConfig, metricsText } from '../helpers/configured-app.js';
import { expectFetchProblem, readJson } from '../helpers/exchange.js';
import type { RunningApp } from '../helpers/app.js';

/**
 * Trying a transform on a stored delivery (CONTRACT 10 "Try it"), on the
 * test run's store: the event built as the contract says, the output or the
 * error with the console lines, 404 for what is not there; and the list.
 */

const CONFIG: ConfigFile = {
  destinations: { chat: { url: 'https://hooks.example.com/chat' } },
  transforms: {
    echo: {
      code: 'export default function (event) { console.log("got", event.eventType); return { body: event, headers: { "x-kind": "echo" } }; }',
    },
    slack: {
      code: 'export default (e) => e.eventType === "invoice.draft" ? null : { body: { text: `${e.eventType} ${e.body.id}` } }',
    },
    thrower: {
      code: 'export default function (event) {\n  console.log("before");\n  throw new Error("no amount on " + event.body.id);\n}',
    },
    looper: { code: 'export default () => { for (;;) {} }', timeoutMs: 30 },
  },
  sources: {
    stripe: { eventType: { body: 'type' }, forward: [{ to: 'chat', transform: 'slack' }] },
    raw: { accept: ['text'], forward: [{ to: 'chat', transform: 'echo' }] },
  },
};

let server: RunningApp;
beforeAll(async () => {
  server = await startWithConfig(CONFIG, {
    transforms: { definitions: transformDefinitions(CONFIG), users: transformUsers(CONFIG) },
  });
});
afterAll(() => server.close());

async function store(
  source: string,
  body: string | Uint8Array,
  headers: Record<string, string>,
  query = '',
): Promise<{ id: string }> {
  const res = await fetch(`${server.url}/api/webhook/${source}${query}`, { method: 'POST', headers, body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { id: string; seq: number };
}

async function tryIt(name: string, deliveryId: string): Promise<Response> {
  return fetch(`${server.url}/api/transforms/${encodeURIComponent(name)}/run`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ deliveryId }),
  });
}

async function ran(name: string, deliveryId: string): Promise<Record<string, unknown>> {
  const res = await tryIt(name, deliveryId);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

describe('the transforms API', () => {
  it('lists the transforms with their versions and the routes that use them', async () => {
    const { items } = await readJson<{ items: Array<Record<string, unknown>> }>(server, '/api/transforms');
    expect(items.map((item) => item.name)).toEqual(['echo', 'looper', 'slack', 'thrower']);
    expect(items.find((item) => item.name === 'slack')).toMatchObject({
      version: expect.stringMatching(/^[0-9a-f]{12}$/),
      timeoutMs: 50,
      memoryMb: 16,
      usedBy: [{ source: 'stripe', destination: 'chat' }],
    });
    expect(items.find((item) => item.name === 'looper')).toMatchObject({ timeoutMs: 30, usedBy: [] });
  });

  it('runs a transform on a stored delivery: its output, its logs, its duration', async () => {
    const { id } = await store('stripe', JSON.stringify({ id: 'in_1', type: 'invoice.paid' }), {
      'content-type': 'application/json',
    });
    const answer = await ran('slack', id);
    expect(answer).toMatchObject({ output: { body: { text: 'invoice.paid in_1' } }, logs: [] });
    expect(typeof answer.durationMs).toBe('number');
    expect(answer.version).toMatch(/^[0-9a-f]{12}$/);
  });

  it('builds the event as CONTRACT 10 says: lower-case headers joined, the query parsed, rawBody with invalid bytes replaced', async () => {
    const bytes = Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' ok')]);
    const { id } = await store(
      'raw',
      bytes,
      { 'content-type': 'text/plain', 'X-Multi': 'a', 'x-other': 'b' },
      '?kind=order&tag=1&tag=2',
    );
    const { seq } = await readJson<{ seq: number }>(server, `/api/deliveries/${id}`);
    // By its seq, as the page and the CLI name a delivery too.
    const answer = await ran('echo', String(seq));
    expect(answer.logs).toEqual(['got null']);
    const event = (answer.output as { body: Record<string, unknown>; headers: Record<string, string> }).body;
    expect((answer.output as { headers: unknown }).headers).toEqual({ 'x-kind': 'echo' });
    expect(event).toMatchObject({
      id,
      seq,
      source: 'raw',
      eventType: null,
      query: { kind: 'order', tag: ['1', '2'] },
      rawBody: 'caf\ufffd ok',
    });
    expect(event.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const headers = event.headers as Record<string, string>;
    expect(headers['x-multi']).toBe('a');
    expect(headers['content-type']).toBe('text/plain');
    expect(Object.keys(headers).every((name) => name === name.toLowerCase())).toBe(true);
  });

  it('a repeated header is one value joined with ", "', async () => {
    const res = await new Promise<string>((resolve, reject) => {
      // fetch joins repeated headers itself: write them twice on the wire.
      import('node:net')
        .then(({ connect }) => {
          const { port } = new URL(server.url);
          const socket = connect(Number(port), '127.0.0.1', () => {
            socket.write(
              'POST /api/webhook/raw HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nX-Tag: one\r\nX-Tag: two\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi',
            );
          });
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        })
        .catch(reject);
    });
    const receipt = JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4)) as { id: string };
    const answer = await ran('echo', receipt.id);
    expect((answer.output as { body: { headers: Record<string, string> } }).body.headers['x-tag']).toBe('one, two');
  });

  it('answers null for a transform that drops the delivery', async () => {
    const { id } = await store('stripe', JSON.stringify({ id: 'in_2', type: 'invoice.draft' }), {
      'content-type': 'application/json',
    });
    expect(await ran('slack', id)).toMatchObject({ output: null, logs: [] });
  });

  it('answers a throw as 200 { error, logs }', async () => {
    const { id } = await store('stripe', JSON.stringify({ id: 'in_3' }), { 'content-type': 'application/json' });
    expect(await ran('thrower', id)).toMatchObject({ error: 'Error: no amount on in_3 (line 3)', logs: ['before'] });
  });

  it('answers a transform stopped at its deadline as an error, and receiving goes on', async () => {
    const { id } = await store('stripe', JSON.stringify({ id: 'in_4' }), { 'content-type': 'application/json' });
    const [answer, receipt] = await Promise.all([
      ran('looper', id),
      store('stripe', '{"id":"in_5"}', { 'content-type': 'application/json' }),
    ]);
    expect(answer).toMatchObject({ error: 'over its time limit (30 ms)' });
    expect(receipt.id).toEqual(expect.any(String));
  });

  it('404 for an unknown transform or delivery', async () => {
    const { id } = await store('stripe', '{"id":"in_6"}', { 'content-type': 'application/json' });
    await expectFetchProblem(await tryIt('nope', id), 'not_found');
    await expectFetchProblem(await tryIt('slack', '0193e6a4-0000-7000-8000-000000000000'), 'not_found');
  });

  it('counts runs by transform and outcome, and their durations', async () => {
    const text = await metricsText(server);
    expect(text).toMatch(/reception_transform_runs_total\{transform="slack",outcome="output"\} [1-9]/);
    expect(text).toMatch(/reception_transform_runs_total\{transform="thrower",outcome="failed"\} [1-9]/);
    expect(text).toMatch(/reception_transform_run_duration_seconds_count\{transform="echo"\} [1-9]/);
  });
});
