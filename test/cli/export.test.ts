import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryJson } from '../../src/api/schemas.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { killAllClis, runCli } from '../helpers/cli.js';
import { sendNumbered, sendWebhook } from '../helpers/cli-send.js';
import { freePort } from '../helpers/free-port.js';

let server: RunningApp;
const sent: Array<{ id: string; source: string }> = [];

beforeAll(async () => {
  server = await startApp();
  // 130 deliveries, two sources, more than two pages of 50.
  for (let n = 1; n <= 130; n += 1) {
    const source = n % 3 === 0 ? 'stripe' : 'github';
    sent.push({ id: (await sendNumbered(server.url, source, n)).id, source });
  }
});

afterAll(async () => {
  killAllClis();
  await server.close();
});

/** A delivery of the API (its type from the API's schema) whose body is what `sendNumbered` sent. */
type ExportedDelivery = Omit<DeliveryJson, 'body'> & { body: { n: number } };

function exportCli(args: string[]): ReturnType<typeof runCli> {
  return runCli(['export', ...args], { RECEPTION_URL: server.url, RECEPTION_TOKEN: server.token });
}

function parse(stdout: string): ExportedDelivery[] {
  expect(stdout.endsWith('\n')).toBe(true);
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as ExportedDelivery);
}

describe('reception export', { timeout: 60_000 }, () => {
  it('writes every delivery exactly once as NDJSON, newest first, across pages, with progress on stderr', async () => {
    const { code, stdout, stderr } = await exportCli(['--page-size', '50']);
    expect(code).toBe(0);
    const exported = parse(stdout);
    expect(exported).toHaveLength(130);
    expect(new Set(exported.map((d) => d.id)).size).toBe(130);
    expect(exported.map((d) => d.id)).toEqual(sent.map((s) => s.id).reverse());
    expect(exported.map((d) => d.body.n)).toEqual(Array.from({ length: 130 }, (_, i) => 130 - i));
    // stderr is a pipe here: plain progress lines, then a summary.
    expect(stderr).toMatch(/^export: 50 of 130 deliveries so far/m);
    expect(stderr).toMatch(/^export: done, 130 deliveries in [\d.]+ s$/m);
  });

  it('--source exports one source', async () => {
    const { code, stdout } = await exportCli(['--source', 'stripe', '--page-size', '7']);
    expect(code).toBe(0);
    const exported = parse(stdout);
    const expected = sent
      .filter((s) => s.source === 'stripe')
      .map((s) => s.id)
      .reverse();
    expect(exported.map((d) => d.id)).toEqual(expected);
    expect(exported.every((d) => d.source === 'stripe')).toBe(true);
  });

  it('--since keeps the deliveries received at or after a time (RFC 3339 or a duration)', async () => {
    const all = parse((await exportCli([])).stdout);
    const cut = all[40]?.receivedAt ?? '';
    const expected = all.filter((d) => d.receivedAt >= cut).map((d) => d.id);
    const { code, stdout } = await exportCli(['--since', cut, '--page-size', '25']);
    expect(code).toBe(0);
    expect(parse(stdout).map((d) => d.id)).toEqual(expected);

    expect(parse((await exportCli(['--since', '1h'])).stdout)).toHaveLength(130);
    const future = await exportCli(['--since', '2999-01-01T00:00:00Z']);
    expect(future.code).toBe(0);
    expect(future.stdout).toBe('');
  });

  it('--progress bar draws a bar that reaches 100%', async () => {
    const { code, stderr } = await exportCli(['--progress', 'bar', '--page-size', '100']);
    expect(code).toBe(0);
    expect(stderr).toContain('\r[');
    expect(stderr).toMatch(/\r\[█+\] 100% {2}130 of 130 deliveries/);
  });

  it('passes the filters of the list on: --event-type, --verification, --until and -q', async () => {
    const typed = [];
    for (const [type, word] of [
      ['invoice.paid', 'needle'],
      ['invoice.created', 'hay'],
      ['refund', 'needle'],
    ]) {
      const body = JSON.stringify({ type, word });
      typed.push((await sendWebhook(server.url, '/api/webhook/billing', body, [['Content-Type', 'application/json']])).id);
    }
    await server.app.index.caughtUp();
    const ids = async (args: string[]): Promise<string[]> => {
      const { code, stdout, stderr } = await exportCli(args);
      expect(code, stderr).toBe(0);
      return stdout === '' ? [] : parse(stdout).map((d) => d.id);
    };
    expect(await ids(['--event-type', 'invoice.*'])).toEqual([typed[1], typed[0]]);
    expect(await ids(['--source', 'billing', '-q', 'NEEDLE'])).toEqual([typed[2], typed[0]]);
    expect(await ids(['--source', 'billing', '--verification', 'verified'])).toEqual([]);
    expect(await ids(['--source', 'billing', '--until', '1h'])).toEqual([]);
    const refused = await exportCli(['--verification', 'maybe']);
    expect(refused.code).toBe(2);
  });

  it('a server that is not there is an error (exit 1)', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const { code, stderr } = await runCli(['export'], { RECEPTION_URL: nobody, RECEPTION_TOKEN: server.token });
    expect(code).toBe(1);
    expect(stderr).toContain(
      `reception: cannot connect to ${nobody}, is Reception running? (--url) [fetch failed: connect ECONNREFUSED`,
    );
  });
});
