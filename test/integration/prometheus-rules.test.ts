import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../helpers/app.js';
import { requirePromtool } from '../helpers/promtool.js';

const promtool = requirePromtool('the alerting rules test (test/integration/prometheus-rules.test.ts)');
const DIR = join(import.meta.dirname, '..', '..', 'docs', 'prometheus');
const RULES = readFileSync(join(DIR, 'reception-rules.yml'), 'utf8');
const run = promisify(execFile);

/**
 * The alerting rules shipped in docs/prometheus (docs/prometheus.md): valid for Prometheus, each alert
 * firing on the series it is about and quiet on its look-alike (promtool's own rule tests), and every
 * metric and outcome they name one that Reception's /metrics really has.
 */
describe('the Prometheus alerting rules in docs/', () => {
  let server: RunningApp;
  let exposition = '';
  beforeAll(async () => {
    server = await startApp({ durability: 'relaxed' });
    exposition = await (await fetch(`${server.url}/metrics`)).text();
  });
  afterAll(async () => {
    await server.close();
  });

  it.runIf(promtool !== undefined)('pass `promtool check rules`', async () => {
    const { stdout } = await run(promtool ?? 'promtool', ['check', 'rules', 'reception-rules.yml'], { cwd: DIR });
    expect(stdout).toContain('SUCCESS: 7 rules found');
  });

  it.runIf(promtool !== undefined)('pass `promtool test rules`: each alert fires when it should, and only then', async () => {
    const { stdout } = await run(promtool ?? 'promtool', ['test', 'rules', 'reception-rules.test.yml'], { cwd: DIR });
    expect(stdout).toContain('SUCCESS');
    const tested = new Set(
      [...readFileSync(join(DIR, 'reception-rules.test.yml'), 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]),
    );
    const alerts = [...RULES.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts.length).toBe(7);
    for (const alert of alerts) expect(tested, alert).toContain(alert);
  });

  it('name only metrics that /metrics has, and outcomes their help lists', () => {
    const names = new Set([...RULES.matchAll(/\b(reception_[a-z_]+)/g)].map((m) => m[1] ?? ''));
    expect(names.size).toBeGreaterThan(3);
    for (const name of names) {
      expect(exposition, name).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
      const help = new RegExp(`^# HELP ${name} (.*)$`, 'm').exec(exposition)?.[1] ?? '';
      for (const selector of RULES.matchAll(new RegExp(`${name}\\{outcome=~?"([^"]+)"\\}`, 'g'))) {
        for (const outcome of (selector[1] ?? '').split('|')) expect(help, `${name} outcome ${outcome}`).toContain(outcome);
      }
    }
  });
});
