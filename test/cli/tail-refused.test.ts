import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RefusalJson } from '../../src/api/refusal-schemas.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { killAllClis, startCli } from '../helpers/cli.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

let server: RunningApp;

beforeEach(async () => {
  server = await startApp({ refusalWriter: { intervalMs: 10 } });
});

afterEach(async () => {
  killAllClis();
  await server.close();
});

function tail(args: string[], url = server.url): ReturnType<typeof startCli> {
  return startCli(['tail', '--refused', ...args], { RECEPTION_URL: url, RECEPTION_TOKEN: server.token });
}

/** A request the webhook route refuses with 415 (text, not JSON); waits until its refusal is written. */
async function refuse(source: string, body: string): Promise<void> {
  const res = await fetch(`${server.url}/api/webhook/${encodeURIComponent(source)}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body,
  });
  expect(res.status).toBe(415);
  await res.text();
  await server.app.refusals.flush();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await server.app.refusals.flush();
}

// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

describe('reception tail --refused', { timeout: 60_000 }, () => {
  it('prints each new refusal once, with the detail the sender got, escaped; nothing from before it started', async () => {
    await refuse('old', 'before');
    const cli = tail([]);
    await cli.waitForStderr(/waiting for refused requests/);
    await refuse('stripe', 'hello \u001b[2J\u202eworld');
    const lines = await cli.waitForLines(1);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}stripe +POST +415 unsupported_media_type +\d+ B {2}This source does not take text\/plain/,
    );
    expect(lines[0]).toContain('hello \\e[2J\\u202eworld');
    expect(cli.stdout().replace(/\n/g, '')).not.toMatch(TERMINAL_CONTROL);
    expect(cli.stdout()).not.toContain('before');
    // A name that is not valid shows as "-".
    const bad = await fetch(`${server.url}/api/webhook/%FF`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bad.status).toBe(400);
    await server.app.refusals.flush();
    const [, second = ''] = await cli.waitForLines(2);
    expect(second).toMatch(/Z {2}- +POST +400 invalid_source/);
    // Aligned: the status starts where the first line's does.
    expect(second.indexOf('400 invalid_source')).toBe(lines[0]?.indexOf('415 unsupported_media_type'));
    expect(await cli.stop()).toBe(0);
  });

  it('--after 0 prints every refusal kept, oldest first, then follows; --json and --source', async () => {
    for (let i = 0; i < 3; i++) {
      await refuse('a', `a${i}`);
      await refuse('b', `b${i}`);
    }
    const cli = tail(['--after', '0', '--json', '--source', 'a']);
    const lines = await cli.waitForLines(3);
    const refusals = lines.map((line) => JSON.parse(line) as RefusalJson);
    expect(refusals.map((r) => r.bodyPreview)).toEqual(['a0', 'a1', 'a2']);
    expect(refusals.every((r) => r.source === 'a' && r.code === 'unsupported_media_type')).toBe(true);
    await refuse('b', 'b3');
    await refuse('a', 'a3');
    await cli.waitForLines(4);
    expect((JSON.parse(cli.lines[3] ?? '') as RefusalJson).bodyPreview).toBe('a3');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(cli.lines).toHaveLength(4);
    await cli.stop();
  });

  it('reads again after the server went away, and prints what was refused meanwhile, once', async () => {
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port));
    try {
      const cli = tail(['--json'], proxy.url);
      await cli.waitForStderr(/waiting for refused requests/);
      await refuse('x', 'one');
      await cli.waitForLines(1);
      await proxy.cut();
      await refuse('x', 'two');
      await refuse('x', 'three');
      await cli.waitForStderr(/cannot read .*trying again in/);
      await proxy.restore();
      await cli.waitForLines(3, 20_000);
      await cli.waitForStderr(/reading .* again/);
      expect(cli.lines.map((line) => (JSON.parse(line) as RefusalJson).bodyPreview)).toEqual(['one', 'two', 'three']);
      await cli.stop();
    } finally {
      await proxy.cut();
    }
  });

  it('a wrong token is an error, not a retry loop', async () => {
    const cli = startCli(['tail', '--refused'], { RECEPTION_URL: server.url, RECEPTION_TOKEN: 'wrong-token-wrong-token' });
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toMatch(/401 unauthorized.*check --token/);
  });
});
