import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceRules } from '../../src/receive/source-rules.js';
import { SqliteStore } from '../../src/inbox/sqlite-store.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { holdCommits } from '../helpers/held-commits.js';
import { tempDir } from '../helpers/temp-dir.js';
import { DEFAULT_POLICY, startWithConfig } from '../helpers/configured-app.js';
import { deliver, post } from '../helpers/exchange.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (label values here have no escaped quotes). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key = '', value = ''] of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[key] = value;
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** CONTRACT 5: /metrics has deliveries by source and outcome, request latency, commit batch size and latency, queue depth. */
describe('/metrics', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('counts deliveries by source and outcome and times requests, commits and the queue', async () => {
    for (let i = 0; i < 3; i++) await deliver(server, 'metered', `{"n":${i}}`);
    const refused = await post(server, 'metered', 'a=1', 'text/plain');
    expect(refused.status).toBe(415);
    await refused.arrayBuffer();

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const samples = parseExposition(await res.text());

    expect(valueOf(samples, 'reception_deliveries_total', { source: 'metered', outcome: 'stored' })).toBe(3);
    expect(valueOf(samples, 'reception_deliveries_total', { source: 'metered', outcome: 'unsupported_media_type' })).toBe(1);
    const route = { route: '/api/webhook/:source', method: 'POST' };
    expect(valueOf(samples, 'reception_http_request_duration_seconds_count', { ...route, status: '200' })).toBe(3);
    expect(valueOf(samples, 'reception_http_request_duration_seconds_bucket', { ...route, status: '200', le: '+Inf' })).toBe(3);
    expect(valueOf(samples, 'reception_http_request_duration_seconds_count', { ...route, status: '415' })).toBe(1);
    expect(valueOf(samples, 'reception_http_request_duration_seconds_sum', { ...route, status: '200' })).toBeGreaterThan(0);
    expect(valueOf(samples, 'reception_commit_batch_size_sum')).toBe(3);
    expect(valueOf(samples, 'reception_commit_duration_seconds_count', { result: 'ok' })).toBe(
      valueOf(samples, 'reception_commit_batch_size_count'),
    );
    // Nothing waits for a commit once every answer is in.
    expect(valueOf(samples, 'reception_write_queue_depth')).toBe(0);
  });

  it('counts the refusals kept, by code, and those dropped, by reason (CONTRACT 9)', async () => {
    const kept = async (): Promise<number> =>
      valueOf(parseExposition(await (await fetch(`${server.url}/metrics`)).text()), 'reception_refusals_kept_total', {
        code: 'unsupported_media_type',
      }) ?? 0;
    await server.app.refusals.flush();
    const before = await kept();
    const refused = await post(server, 'metered', 'a=1', 'text/plain');
    expect(refused.status).toBe(415);
    await refused.arrayBuffer();
    // Once the writer has written it.
    for (let i = 0; i < 100 && (await kept()) === before; i++) await server.app.refusals.flush();
    expect(await kept()).toBe(before + 1);
    await server.app.refusals.stop();
    const late = await post(server, 'metered', 'b=1', 'text/plain');
    await late.arrayBuffer();
    const samples = parseExposition(await (await fetch(`${server.url}/metrics`)).text());
    expect(valueOf(samples, 'reception_refusals_dropped_total', { reason: 'shutdown' })).toBe(1);
    expect(samples.some((s) => s.name === 'reception_refusals_pruned_total')).toBe(true);
  });

  it('reports the deliveries that wait for a commit as the write queue depth', async () => {
    const dir = tempDir();
    const real = new SqliteStore({ file: join(dir.path, 'held.sqlite'), durability: 'relaxed' });
    const { store: holding, release } = holdCommits(real);
    const app = await startApp({ store: holding });
    const depth = async (): Promise<number | undefined> =>
      valueOf(parseExposition(await (await fetch(`${app.url}/metrics`)).text()), 'reception_write_queue_depth');
    try {
      const answers = [1, 2, 3].map((n) => post(app, 'held', `{"n":${n}}`));
      let seen = await depth();
      for (let i = 0; i < 200 && seen !== 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        seen = await depth();
      }
      expect(seen).toBe(3);
      release();
      expect((await Promise.all(answers)).map((res) => res.status)).toEqual([200, 200, 200]);
      expect(await depth()).toBe(0);
    } finally {
      release();
      await app.close();
      await real.close();
      dir.remove();
    }
  });
});

/**
 * Sources beyond the first 500 share the label `_other`, so that strangers
 * cannot grow the registry; the sources of the config file are not
 * strangers: each keeps a label of its own however many others came first.
 */
describe('/metrics source labels', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startWithConfig({ sources: { configured: { anyJson: true } } });
  });
  afterAll(async () => {
    await server.close();
  });

  const samples = async (): Promise<Sample[]> => parseExposition(await (await fetch(`${server.url}/metrics`)).text());

  it('gives a configured source, and one added by a reload, its own label after 600 junk sources', async () => {
    for (let i = 0; i < 600; i++) {
      const junk = await post(server, `junk-${i}`, '', 'application/json');
      expect(junk.status).toBe(400);
      await junk.arrayBuffer();
    }
    await deliver(server, 'configured', '{}');
    // A source the config file names from a reload on (SIGHUP) is no stranger either.
    server.app.setRules(SourceRules.fromConfig({ sources: { configured: {}, 'added-later': {} } }, DEFAULT_POLICY));
    await deliver(server, 'added-later', '{}');
    // One the file does not name still shares the pool.
    await deliver(server, 'stranger', '{}');

    const after = await samples();
    expect(valueOf(after, 'reception_deliveries_total', { source: 'configured', outcome: 'stored' })).toBe(1);
    expect(valueOf(after, 'reception_deliveries_total', { source: 'added-later', outcome: 'stored' })).toBe(1);
    expect(valueOf(after, 'reception_deliveries_total', { source: 'stranger' })).toBeUndefined();
    expect(valueOf(after, 'reception_deliveries_total', { source: '_other', outcome: 'stored' })).toBe(1);
    expect(valueOf(after, 'reception_deliveries_total', { source: '_other', outcome: 'empty_body' })).toBe(100);
    const labels = new Set(after.filter((s) => s.name === 'reception_deliveries_total').map((s) => s.labels.source));
    expect(labels.size).toBe(500 + 3);
  });
});
