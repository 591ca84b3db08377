import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { deliver, post } from '../helpers/exchange.js';
import { promlintProblems, promtoolCheckMetrics, requirePromtool } from '../helpers/promtool.js';

const promtool = requirePromtool('the promtool test (test/integration/metrics-promtool.test.ts)');

/** /metrics as Prometheus' own checker wants it (docs/running.md): `promtool check metrics` exits 0. */
describe('/metrics and promtool', () => {
  let server: RunningApp;
  let exposition = '';
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
    // Traffic first, so that the labelled families have samples: stored, refused, read.
    await deliver(server, 'linted', '{"n":1}');
    await (await post(server, 'linted', 'a=1', 'text/plain')).arrayBuffer();
    await (await fetch(`${server.url}/api/deliveries`, { headers: server.auth })).arrayBuffer();
    const answer = await fetch(`${server.url}/metrics`);
    expect(answer.status).toBe(200);
    exposition = await answer.text();
  });
  afterAll(async () => {
    await server.close();
  });

  it("follows promtool's rules: HELP and TYPE, _total on counters only, no reserved suffix, snake_case, base units", () => {
    expect(exposition).toContain('reception_deliveries_total{');
    expect(promlintProblems(exposition)).toEqual([]);
  });

  it("keeps Node's active handles, requests and resources, as gauges that are not named _total", () => {
    for (const kind of ['handles', 'requests', 'resources']) {
      expect(exposition).not.toContain(`nodejs_active_${kind}_total`);
      expect(exposition).toContain(`# TYPE nodejs_active_${kind}_all gauge`);
    }
    // A server listening with a client connected has active handles.
    const handles = /^nodejs_active_handles_all (\d+)$/m.exec(exposition);
    expect(Number(handles?.[1])).toBeGreaterThan(0);
  });

  it('reads values as Prometheus does: NaN in any case (prom-client writes Nan for a gauge with no data yet), not a word', async () => {
    const gauge = (value: string): string => `# HELP x_seconds a gauge\n# TYPE x_seconds gauge\nx_seconds ${value}\n`;
    expect(promlintProblems(gauge('Nan'))).toEqual([]);
    expect(promlintProblems(gauge('Bogus'))).toEqual(['x_seconds: value Bogus is not a number']);
    if (promtool !== undefined) {
      expect((await promtoolCheckMetrics(promtool, gauge('Nan'))).code).toBe(0);
      expect((await promtoolCheckMetrics(promtool, gauge('Bogus'))).code).not.toBe(0);
    }
  });

  it.runIf(promtool !== undefined)('passes `promtool check metrics`', async () => {
    const { code, output } = await promtoolCheckMetrics(promtool ?? 'promtool', exposition);
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
