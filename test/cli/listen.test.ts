import { join } from 'node:path';

import { readFileSync } from 'node:fs';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { startApp, type RunningApp } from '../helpers/app.js';

import { tempDir } from '../helpers/temp-dir.js';

import { killAllClis, startCli } from '../helpers/cli.js';

import { hmacHex, sendNumbered, sendWebhook } from '../helpers/cli-send.js';

import { headerPairs, headerValue, Target, type Received } from '../helpers/listen-target.js';

import { startTcpProxy } from '../helpers/tcp-proxy.js';

import { eventually } from '../helpers/eventually.js';

let server: RunningApp;
let target: Target;
let dir: { path: string; remove: () => void };

beforeEach(async () => {
  server = await startApp();
  target = new Target();
  await target.start();
  dir = tempDir('reception-listen-');
});

afterEach(async () => {
  killAllClis();
  await target.stop();
  await server.close();
  dir.remove();
});

function listen(args: string[] = [], url = server.url): ReturnType<typeof startCli> {
  return startCli(['listen', '--forward-to', target.url('/hooks/in'), '--state', join(dir.path, 'state.json'), ...args], {
    RECEPTION_URL: url,
    RECEPTION_TOKEN: server.token,
    HOME: dir.path,
  });
}

/** The `n` of each `{"n": n}` body the target received, in order. */
function numbers(received: Received[]): number[] {
  return received.map((r) => (JSON.parse(r.body.toString('utf8')) as { n: number }).n);
}

describe('reception listen', { timeout: 60_000 }, () => {
  it("forwards the exact bytes, method and headers, so the provider's signature still verifies", async () => {
    const cli = listen();
    await cli.waitForStderr(/connected to/);

    // JSON that any re-serialization would change: spacing, key order, escapes, a number beyond 2^53, a duplicate key.
    const json = Buffer.from('{ "z": 1,\n  "a": 1.50, "big": 12345678901234567890, "u": "caf\\u00e9 \u2603", "a": 2 }\n');
    const form = Buffer.from('b=2&a=1&a=%E2%98%83&empty=&plus=a+b');
    const sentHeaders = (bytes: Buffer, type: string): Array<[string, string]> => [
      ['Content-Type', type],
      ['X-Signature', `sha256=${hmacHex(bytes)}`],
      ['X-Custom-Order', 'first'],
      ['x-custom-order', 'second'],
      ['Authorization', 'Bearer provider-secret'],
      ['Keep-Alive', 'timeout=5'],
      ['Connection', 'keep-alive, X-Hop-Only'],
      ['X-Hop-Only', 'for this hop'],
      ['TE', 'trailers'],
      ['Proxy-Authorization', 'Basic cHJveHk='],
      ['User-Agent', 'Provider-Hookshot/1.0'],
    ];
    const first = await sendWebhook(
      server.url,
      '/api/webhook/github?delivery=1&x=%20y',
      json,
      sentHeaders(json, 'application/json; charset=utf-8'),
    );
    const second = await sendWebhook(
      server.url,
      '/api/webhook/github',
      form,
      sentHeaders(form, 'application/x-www-form-urlencoded'),
    );
    await eventually(() => target.received.length === 2, 15_000, 'the target received both deliveries');
    const lines = await cli.waitForLines(2);

    const [gotJson, gotForm] = target.received as [Received, Received];
    for (const [got, bytes] of [
      [gotJson, json],
      [gotForm, form],
    ] as const) {
      expect(got.method).toBe('POST');
      expect(got.body.equals(bytes)).toBe(true);
      // The target checks the signature over what it received: the same HMAC as over what the provider sent.
      expect(headerValue(got.rawHeaders, 'x-signature')).toBe(`sha256=${hmacHex(got.body)}`);
      expect(hmacHex(got.body)).toBe(hmacHex(bytes));
      expect(headerValue(got.rawHeaders, 'host')).toBe(new URL(target.url()).host);
      expect(headerValue(got.rawHeaders, 'content-length')).toBe(String(bytes.length));
      // The delivery's own headers, in order and as spelled, minus hop-by-hop, host, content-length and redacted ones.
      const forwarded = headerPairs(got.rawHeaders).filter(
        ([name]) => !['host', 'content-length', 'connection'].includes(name.toLowerCase()),
      );
      expect(forwarded).toEqual([
        ['Content-Type', got === gotJson ? 'application/json; charset=utf-8' : 'application/x-www-form-urlencoded'],
        ['X-Signature', `sha256=${hmacHex(bytes)}`],
        ['X-Custom-Order', 'first'],
        ['x-custom-order', 'second'],
        ['User-Agent', 'Provider-Hookshot/1.0'],
      ]);
    }
    // The delivery's query string goes along.
    expect(gotJson.url).toBe('/hooks/in?delivery=1&x=%20y');
    expect(gotForm.url).toBe('/hooks/in');
    // seq, method, source, event type (- for none), size, id, the answer.
    expect(lines[0]).toMatch(new RegExp(`^seq \\d+  POST  github  -  \\d+ B  ${first.id}  -> 200 OK  \\d+ ms$`));
    expect(lines[1]).toContain(second.id);
    await cli.stop();
  });

  it('resumes after a restart where it stopped: deliveries sent while it was down arrive, none twice', async () => {
    const statePath = join(dir.path, 'state.json');
    let cli = listen();
    await cli.waitForStderr(/connected to/);
    for (let n = 1; n <= 3; n += 1) await sendNumbered(server.url, 'orders', n);
    await cli.waitForLines(3);
    // SIGKILL: no clean shutdown; the state file written after each forward is all it has.
    await cli.kill();
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { lastSeq: number };
    expect(saved.lastSeq).toBe(3);

    for (let n = 4; n <= 6; n += 1) await sendNumbered(server.url, 'orders', n);

    cli = listen();
    await cli.waitForStderr(/resuming after seq 3/);
    await cli.waitForStderr(/connected to/);
    for (let n = 7; n <= 8; n += 1) await sendNumbered(server.url, 'orders', n);
    await cli.waitForLines(5);
    await eventually(() => target.received.length >= 8, 15_000, 'the target received 8 deliveries');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(numbers(target.received)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

    // A clean stop (SIGTERM) and a start with nothing new forward nothing again.
    expect(await cli.stop()).toBe(0);
    cli = listen();
    await cli.waitForStderr(/connected to/);
    await sendNumbered(server.url, 'orders', 9);
    await eventually(() => target.received.length >= 9, 15_000, 'the target received the 9th');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(numbers(target.received)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await cli.stop();
  });

  it('while the target is down, retries the same delivery with backoff and skips nothing', async () => {
    const cli = listen();
    await cli.waitForStderr(/connected to/);
    await sendNumbered(server.url, 'orders', 1);
    await cli.waitForLines(1);

    await target.stop();
    await sendNumbered(server.url, 'orders', 2);
    await sendNumbered(server.url, 'orders', 3);
    await cli.waitForStderr(/target unavailable \(.*ECONNREFUSED.*\); retrying seq 2 in/);
    await cli.waitForStderr(/(retrying seq 2 in[^\n]*\n[^]*){2}/);
    expect(target.received).toHaveLength(1);

    // Back, but answering 503 for a moment (an app still starting): still the same delivery.
    let unavailable = 2;
    target.status = () => (unavailable-- > 0 ? 503 : 200);
    await target.start();
    const lines = await cli.waitForLines(3, 20_000);
    expect(cli.stderr()).toMatch(/target unavailable \(503 Service Unavailable\); retrying seq 2/);
    const answered = target.received.filter((_, i) => i === 0 || i > 2);
    expect(numbers(target.received)).toEqual([1, 2, 2, 2, 3]);
    expect(numbers(answered)).toEqual([1, 2, 3]);
    expect(lines.slice(1).every((line) => line.includes('-> 200 OK'))).toBe(true);
    await cli.stop();
  });

  it('reconnects when the server goes away and forwards what arrived meanwhile', async () => {
    const address = server.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const proxy = await startTcpProxy('127.0.0.1', address.port);
    try {
      const cli = listen([], proxy.url);
      await cli.waitForStderr(/connected to/);
      await sendNumbered(server.url, 'orders', 1);
      await cli.waitForLines(1);

      await proxy.cut();
      await cli.waitForStderr(/connection lost/);
      await sendNumbered(server.url, 'orders', 2);
      await proxy.restore();
      await cli.waitForStderr(/reconnected to/, 15_000);
      await sendNumbered(server.url, 'orders', 3);
      await cli.waitForLines(3, 15_000);
      expect(numbers(target.received)).toEqual([1, 2, 3]);
      await cli.stop();
    } finally {
      await proxy.cut();
    }
  });

  it('--source forwards only that source', async () => {
    const cli = listen(['--source', 'stripe']);
    await cli.waitForStderr(/starting at the present \(source stripe has no deliveries yet\)/);
    await cli.waitForStderr(/connected to/);
    await sendNumbered(server.url, 'github', 1);
    await sendNumbered(server.url, 'stripe', 2);
    await sendNumbered(server.url, 'github', 3);
    await sendNumbered(server.url, 'stripe', 4);
    await cli.waitForLines(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(numbers(target.received)).toEqual([2, 4]);
    await cli.stop();
  });

  it('takes --forward-to as stripe listen does: a port alone (on 127.0.0.1, with or without a path), or host:port/path', async () => {
    const port = new URL(target.url()).port;
    // A port with a path is this machine (issue 28: `23090/flaky` went to http://0.0.90.50/flaky).
    for (const [given, shown] of [
      [port, `http://127.0.0.1:${port}/`],
      [`${port}/hooks/flaky`, `http://127.0.0.1:${port}/hooks/flaky`],
      [`:${port}/hooks/colon`, `http://127.0.0.1:${port}/hooks/colon`],
      [`localhost:${port}/hooks/short`, `http://localhost:${port}/hooks/short`],
    ] as const) {
      const cli = startCli(['listen', '--forward-to', given, '--state', join(dir.path, `state-${given.length}.json`)], {
        RECEPTION_URL: server.url,
        RECEPTION_TOKEN: server.token,
        HOME: dir.path,
      });
      await cli.waitForStderr(new RegExp(`forwarding to ${shown.replace(/[/.]/g, '\\$&')}`));
      await cli.waitForStderr(/connected to/);
      await sendNumbered(server.url, 'orders', given.length);
      await cli.waitForLines(1);
      expect(target.received.at(-1)?.url).toBe(new URL(shown).pathname);
      await cli.stop();
    }
    for (const wrong of ['ftp://example/x', '70000/x', '3000:80/x']) {
      const bad = await startCli(['listen', '--forward-to', wrong], { RECEPTION_TOKEN: server.token }).exited;
      expect(bad, wrong).toBe(2);
    }
  });

  it("shows the target's 4xx and 5xx as failures and counts them in the summary it prints when stopped", async () => {
    target.status = (r) =>
      (JSON.parse(r.body.toString('utf8')) as { n: number }).n === 2 ? 500 : r.url.includes('x') ? 404 : 200;
    const cli = listen();
    await cli.waitForStderr(/connected to/);
    await sendNumbered(server.url, 'orders', 1);
    const failed = await sendNumbered(server.url, 'orders', 2);
    await sendNumbered(server.url, 'orders', 3);
    const lines = await cli.waitForLines(3);
    expect(lines[0]).toMatch(/-> 200 OK {2}\d+ ms$/);
    expect(lines[1]).toMatch(/-> 500 Internal Server Error {2}\d+ ms {2}failed$/);
    expect(lines[2]).toMatch(/-> 200 OK {2}\d+ ms$/);
    // Not sent again without --retry-failed: one attempt each.
    expect(numbers(target.received)).toEqual([1, 2, 3]);
    expect(await cli.stop()).toBe(0);
    expect(cli.stderr()).toContain(
      `listen: forwarded 3: 2 succeeded, 1 failed (seq 2 ${failed.id} -> 500); send one again with: reception replay <id> --to ${target.url('/hooks/in')}`,
    );
  });

  it('--retry-failed sends a failed delivery again with backoff, up to --max-attempts, before moving on', async () => {
    let failures = 2;
    target.status = (r) => {
      const n = (JSON.parse(r.body.toString('utf8')) as { n: number }).n;
      if (n === 1) return failures-- > 0 ? 500 : 200;
      return n === 2 ? 422 : 200;
    };
    const cli = listen(['--retry-failed', '--max-attempts', '3']);
    await cli.waitForStderr(/forwarding to .*, failures retried \(3 attempts\)/);
    await cli.waitForStderr(/connected to/);
    await sendNumbered(server.url, 'orders', 1);
    const gaveUp = await sendNumbered(server.url, 'orders', 2);
    await sendNumbered(server.url, 'orders', 3);
    const lines = await cli.waitForLines(3, 20_000);
    expect(lines[0]).toMatch(/-> 200 OK {2}\d+ ms {2}\(3 attempts\)$/);
    expect(lines[1]).toMatch(/-> 422 Unprocessable Entity {2}\d+ ms {2}failed, 3 attempts$/);
    expect(numbers(target.received)).toEqual([1, 1, 1, 2, 2, 2, 3]);
    expect(cli.stderr()).toMatch(/target answered 500 Internal Server Error \(attempt 1 of 3\); retrying seq 1 in/);
    expect(await cli.stop()).toBe(0);
    expect(cli.stderr()).toContain(`listen: forwarded 3: 2 succeeded, 1 failed (seq 2 ${gaveUp.id} -> 422)`);

    const alone = await startCli(['listen', '--forward-to', '3000', '--max-attempts', '3'], { RECEPTION_TOKEN: server.token })
      .exited;
    expect(alone).toBe(2);
  });
});
