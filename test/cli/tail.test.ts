import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryJson } from '../../src/api/schemas.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { killAllClis, startCli } from '../helpers/cli.js';
import { sendNumbered, sendWebhook } from '../helpers/cli-send.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

let server: RunningApp;

beforeEach(async () => {
  server = await startApp();
});

afterEach(async () => {
  killAllClis();
  await server.close();
});

function tail(args: string[], url = server.url): ReturnType<typeof startCli> {
  return startCli(['tail', ...args], { RECEPTION_URL: url, RECEPTION_TOKEN: server.token });
}

/** Characters that could drive a terminal: C0 (but tab) and C1 controls, DEL, bidi overrides and isolates. */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

describe('reception tail', { timeout: 60_000 }, () => {
  it('prints one readable line per new delivery, and nothing from before it started', async () => {
    await sendNumbered(server.url, 'old', 0);
    const cli = tail([]);
    await cli.waitForStderr(/connected to/);
    const a = await sendNumbered(server.url, 'github', 1);
    const b = await sendWebhook(server.url, '/api/webhook/twilio', 'From=%2B14155550100&Body=hi', [
      ['Content-Type', 'application/x-www-form-urlencoded'],
    ]);
    const lines = await cli.waitForLines(2);
    expect(lines).toHaveLength(2);
    // Time, source, event type (- for none), method, size, id, body.
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}github +- +POST +8 B {2}/);
    expect(lines[0]).toContain(a.id);
    // In aligned columns: the ids and the bodies start at the same place on both lines.
    expect(lines[1]?.indexOf(b.id)).toBe(lines[0]?.indexOf(a.id));
    expect(lines[1]?.indexOf('{"From"')).toBe(lines[0]?.indexOf('{"n":1}'));
    expect(lines[0]).toContain('{"n":1}');
    expect(lines[1]).toContain('twilio');
    expect(lines[1]).toContain(b.id);
    expect(lines[1]).toContain('{"From":"+14155550100","Body":"hi"}');
    expect(cli.stdout()).not.toContain('old');
    expect(await cli.stop()).toBe(0);
  });

  it('escapes control characters and bidi overrides so a payload cannot drive the terminal', async () => {
    const cli = tail([]);
    await cli.waitForStderr(/connected to/);
    // A raw CSI (C1) and a right-to-left override in the JSON text itself (JSON allows them unescaped),
    // escaped ESC and BEL, and an override in the source name.
    const hostile = '{"title": "\u009b31m\u202egnp.exe", "clear": "\\u001b[2J", "bell": "\\u0007"}';
    const sent = await sendWebhook(server.url, `/api/webhook/${encodeURIComponent('evil\u202esource')}`, hostile, [
      ['Content-Type', 'application/json'],
    ]);
    const [line = ''] = await cli.waitForLines(1);
    expect(line).toContain(sent.id);
    expect(line).not.toMatch(TERMINAL_CONTROL);
    expect(line).toContain('evil\\u202esource');
    expect(line).toContain('\\x9b31m\\u202egnp.exe');
    expect(cli.stdout().replace(/\n/g, '')).not.toMatch(TERMINAL_CONTROL);
    await cli.stop();
  });

  it('prints the event type, and prints only what --event-type, --verification and -q let through', async () => {
    const cli = tail(['--event-type', 'order.*', '--verification', 'none', '-q', 'NEEDLE']);
    await cli.waitForStderr(/connected to/);
    const json: Array<[string, string]> = [['Content-Type', 'application/json']];
    await sendWebhook(server.url, '/api/webhook/shop', '{"type":"order.paid","note":"no match"}', json);
    await sendWebhook(server.url, '/api/webhook/shop', '{"type":"refund","note":"a needle"}', json);
    const inBody = await sendWebhook(server.url, '/api/webhook/shop', '{"type":"order.paid","note":"a needle"}', json);
    const inHeader = await sendWebhook(server.url, '/api/webhook/shop', '{"type":"order.sent"}', [
      ...json,
      ['X-Trace', 'needle-7'],
    ]);
    const lines = await cli.waitForLines(2);
    expect(lines[0]).toMatch(/ {2}shop +order\.paid +POST /);
    expect(lines[0]).toContain(inBody.id);
    expect(lines[1]).toMatch(/ {2}shop +order\.sent +POST /);
    expect(lines[1]).toContain(inHeader.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cli.lines).toHaveLength(2);
    await cli.stop();
  });

  it('refuses a filter that is not one, before it connects (exit 2)', async () => {
    for (const args of [
      ['--verification', 'maybe'],
      ['-q', 'ab'],
      ['--since', 'someday'],
      ['--until', '2026-02-30'],
    ]) {
      const cli = tail(args);
      expect(await cli.exited).toBe(2);
      expect(cli.stderr()).toMatch(/^reception: --(verification|query|since|until): expected/m);
    }
  });

  it('--json prints each Delivery as one line of JSON, --source filters', async () => {
    const cli = tail(['--json', '--source', 'stripe']);
    await cli.waitForStderr(/connected to/);
    const sent = [];
    for (let n = 1; n <= 3; n += 1) {
      sent.push(await sendNumbered(server.url, 'stripe', n));
      await sendNumbered(server.url, 'github', n);
    }
    const lines = await cli.waitForLines(3);
    const deliveries = lines.map((line) => JSON.parse(line) as DeliveryJson);
    expect(deliveries.map((d) => d.id)).toEqual(sent.map((s) => s.id));
    expect(deliveries.map((d) => d.body)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(deliveries.every((d) => d.source === 'stripe' && Array.isArray(d.headers))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cli.lines).toHaveLength(3);
    await cli.stop();
  });

  it('reconnects when the connection drops and resumes after the last delivery it printed', async () => {
    const address = server.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const proxy = await startTcpProxy('127.0.0.1', address.port);
    try {
      const cli = tail(['--json'], proxy.url);
      await cli.waitForStderr(/connected to/);
      const first = await sendNumbered(server.url, 'github', 1);
      await cli.waitForLines(1);

      await proxy.cut();
      await cli.waitForStderr(/connection lost/);
      // Sent while tail cannot reach the server: it must still get them, after reconnecting.
      const whileAway = [await sendNumbered(server.url, 'github', 2), await sendNumbered(server.url, 'github', 3)];
      await proxy.restore();
      await cli.waitForStderr(/reconnected to/, 15_000);
      const after = await sendNumbered(server.url, 'github', 4);

      const lines = await cli.waitForLines(4, 15_000);
      const ids = lines.map((line) => (JSON.parse(line) as { id: string }).id);
      expect(ids).toEqual([first.id, ...whileAway.map((s) => s.id), after.id]);
      await cli.stop();
    } finally {
      await proxy.cut();
    }
  });

  it('--after SEQ starts from that position (0: the whole inbox), then follows live', async () => {
    const before = [await sendNumbered(server.url, 'a', 1), await sendNumbered(server.url, 'a', 2)];
    const cli = tail(['--json', '--after', '0']);
    await cli.waitForLines(2);
    const live = await sendNumbered(server.url, 'a', 3);
    const lines = await cli.waitForLines(3);
    expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual([...before, live].map((s) => s.id));
    await cli.stop();
  });

  it('a wrong token is an error, not a retry loop', async () => {
    const cli = startCli(['tail', '--url', server.url, '--token', 'not-the-right-token-at-all']);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain('401');
  });

  it('a wrong token from an address that sent too many (429 rate_limited) is an error too, not a retry loop', async () => {
    for (let i = 0; i < 5; i++) {
      const answer = await fetch(`${server.url}/api/sources`, { headers: { authorization: 'Bearer wrong' } });
      expect(answer.status).toBe(401);
      await answer.arrayBuffer();
    }
    const cli = startCli(['tail', '--url', server.url, '--token', 'not-the-right-token-at-all']);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toMatch(/429 rate_limited: .*check --token or RECEPTION_TOKEN/);
  });
});
