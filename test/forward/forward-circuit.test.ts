import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { InboxDatabase } from '../../src/inbox/inbox-database.js';
import type { IssueKind, IssueSignals } from '../../src/issues/issue-signals.js';
import type { RunningApp } from '../helpers/app.js';
import { resolveDestinations } from '../../src/forwarding/destination.js';
import { validateConfig } from '../../src/config/source-config.js';
import { DestinationServer, type ReceivedRequest } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { api, forwardsOf, send, startForwarding, storeAvailable, STORES } from '../helpers/forwarding-app.js';

/**
 * A circuit per destination (docs/circuits.md, CONTRACT 11), on each store,
 * with a real HTTP destination on loopback: it opens after `breaker.failures`
 * failed attempts in a row, nothing is sent while it is open, then one
 * probe; a failed probe doubles the cooldown; a successful one closes it,
 * and the forwards that waited arrive without having spent attempts. A 429
 * halves the destination's rate.
 */

interface CircuitView {
  state: 'closed' | 'open' | 'half_open';
  since: string | null;
  consecutiveFailures: number;
  until: string | null;
}

const COOLDOWN_MS = 500;

async function circuitOf(server: RunningApp<InboxDatabase>, name = 'app'): Promise<CircuitView> {
  const { status, json } = await api<{ items: Array<{ name: string; circuit: CircuitView }> }>(server, '/api/destinations');
  expect(status).toBe(200);
  const item = json.items.find((d) => d.name === name);
  if (item === undefined) throw new Error(`no destination ${name}`);
  return item.circuit;
}

/** Records what the circuit tells the issues feature. */
class SignalLog implements IssueSignals {
  readonly said: Array<{ call: 'occurred' | 'cleared'; kind: IssueKind; subject: string; error?: string | null }> = [];
  occurred(kind: IssueKind, subject: string, error: string | null): void {
    this.said.push({ call: 'occurred', kind, subject, error });
  }
  cleared(kind: IssueKind, subject: string): void {
    this.said.push({ call: 'cleared', kind, subject });
  }
}

const attemptHeader = (r: ReceivedRequest): number => Number(r.headers['x-reception-attempt']);
const between = (requests: readonly ReceivedRequest[], from: number, to: number): ReceivedRequest[] =>
  requests.filter((r) => r.at >= from && r.at < to);

describe.each(STORES)('a circuit per destination (%s)', (kind) => {
  let destination: DestinationServer;
  let server: RunningApp<InboxDatabase> | undefined;

  beforeEach(async () => {
    destination = new DestinationServer();
    await destination.listen();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await destination.close();
  });

  it('opens after 3 failures, sends nothing while open, then one probe (doubling the cooldown when it fails), and closes on a 200', async () => {
    if (!(await storeAvailable(kind, 'circuit tests'))) return;
    const signals = new SignalLog();
    server = await startForwarding(
      kind,
      {
        destinations: {
          app: {
            url: destination.url,
            allowPrivateNetwork: true,
            concurrency: 1,
            retry: { initialMs: 20, maxMs: 50 },
            breaker: { failures: 3, cooldownSeconds: COOLDOWN_MS / 1000 },
          },
        },
        sources: { shop: { forward: [{ to: 'app' }] } },
      },
      { issues: signals },
    );
    const running = server;
    let healthy = false;
    destination.answer = () => ({ status: healthy ? 200 : 500 });
    expect(await circuitOf(running)).toEqual({ state: 'closed', since: null, consecutiveFailures: 0, until: null });

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send(running, 'shop', `{"n":${i}}`));
    let first: CircuitView | undefined;
    await eventually(async () => (first = await circuitOf(running)).state === 'open', 5000, 'the circuit never opened');
    if (first?.since == null || first.until === null) throw new Error('an open circuit without times');
    expect(first.consecutiveFailures).toBeGreaterThanOrEqual(3);
    const since1 = Date.parse(first.since);
    const until1 = Date.parse(first.until);
    expect(until1 - since1).toBe(COOLDOWN_MS);

    // The probe: one request once the cooldown ended; it fails, and the circuit opens again for twice as long.
    await eventually(() => destination.requests.some((r) => r.at >= until1), 5000, 'no probe after the cooldown');
    let second: CircuitView | undefined;
    await eventually(
      async () => {
        second = await circuitOf(running);
        return second.state === 'open' && second.since !== null && Date.parse(second.since) > since1;
      },
      5000,
      'the failed probe did not open the circuit again',
    );
    if (second?.since == null || second.until === null) throw new Error('an open circuit without times');
    const until2 = Date.parse(second.until);
    expect(until2 - Date.parse(second.since)).toBe(2 * COOLDOWN_MS);
    healthy = true;

    await eventually(
      async () => (await Promise.all(ids.map((id) => forwardsOf(running, id)))).every(([f]) => f?.status === 'succeeded'),
      8000,
      'the forwards never arrived once the destination answered',
    );
    const requests = destination.requests;
    // Nothing while open (a grace for an attempt that had started as it opened), one probe per half-open.
    expect(between(requests, since1 + 100, until1)).toEqual([]);
    const probes = between(requests, until1, until2);
    expect(probes).toHaveLength(1);
    const probe2 = requests.find((r) => r.at >= until2);
    if (probes[0] === undefined || probe2 === undefined) throw new Error('no probes');
    expect(probe2.at - probes[0].at).toBeGreaterThanOrEqual(2 * COOLDOWN_MS);
    expect(await circuitOf(running)).toMatchObject({ state: 'closed', consecutiveFailures: 0 });

    // No attempt was spent without a request: each forward's attempts are the requests that carried it, numbered 1…k.
    let attempts = 0;
    let waitedUnspent = 0;
    for (const id of ids) {
      const [forward] = await forwardsOf(running, id);
      const sent = destination.requestsFor(id).map(attemptHeader);
      expect(forward?.attempts.map((a) => a.n)).toEqual(sent);
      expect(sent).toEqual(sent.map((_n, i) => i + 1));
      attempts += sent.length;
      if (sent.length === 1 && (destination.requestsFor(id)[0]?.at ?? 0) >= until1) waitedUnspent++;
    }
    expect(attempts).toBe(requests.length);
    // Some forwards waited out both openings (claimed, then handed back) and arrived at their first attempt.
    expect(waitedUnspent).toBeGreaterThanOrEqual(1);

    expect(signals.said).toEqual([
      { call: 'occurred', kind: 'destination_down', subject: 'app', error: 'HTTP 500' },
      { call: 'occurred', kind: 'destination_down', subject: 'app', error: 'HTTP 500' },
      { call: 'cleared', kind: 'destination_down', subject: 'app' },
    ]);
    const metrics = await fetch(`${running.url}/metrics`, { headers: running.auth }).then((r) => r.text());
    expect(metrics).toContain('reception_destination_circuit_openings_total{destination="app"} 2');
    expect(metrics).toContain('reception_destination_circuit_state{destination="app"} 0');
  });

  it('a reload that changes the destination starts it with its circuit closed', async () => {
    if (!(await storeAvailable(kind, 'circuit tests'))) return;
    const settings = {
      url: destination.url,
      allowPrivateNetwork: true,
      concurrency: 1,
      retry: { initialMs: 20, maxMs: 50 },
      breaker: { failures: 2, cooldownSeconds: 60 },
    };
    server = await startForwarding(kind, {
      destinations: { app: settings },
      sources: { shop: { forward: [{ to: 'app' }] } },
    });
    const running = server;
    let healthy = false;
    destination.answer = () => ({ status: healthy ? 204 : 500 });
    const id = await send(running, 'shop', '{"n":1}');
    await eventually(async () => (await circuitOf(running)).state === 'open', 5000);
    const sent = destination.requests.length;
    healthy = true;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(destination.requests).toHaveLength(sent);
    // The operator fixes the destination (here: a longer timeout) and reloads: no 60 s wait.
    running.app.forwarder.apply(resolveDestinations({ app: { ...settings, timeoutMs: 5000 } }));
    await eventually(async () => (await forwardsOf(running, id))[0]?.status === 'succeeded', 5000);
    expect(await circuitOf(running)).toEqual({ state: 'closed', since: null, consecutiveFailures: 0, until: null });
  });

  it('a 429 halves the whole destination’s rate: the requests after it are spaced by the halved rate', async () => {
    if (!(await storeAvailable(kind, 'circuit tests'))) return;
    server = await startForwarding(kind, {
      destinations: {
        app: {
          url: destination.url,
          allowPrivateNetwork: true,
          concurrency: 1,
          rateLimit: { requests: 20, perSeconds: 1 },
          retry: { initialMs: 20, maxMs: 50 },
        },
      },
      sources: { shop: { forward: [{ to: 'app' }] } },
    });
    const running = server;
    destination.answer = (_r, n) => ({ status: n === 1 ? 429 : 200 });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await send(running, 'shop', `{"n":${i}}`));
    await eventually(
      async () => (await Promise.all(ids.map((id) => forwardsOf(running, id)))).every(([f]) => f?.status === 'succeeded'),
      8000,
    );
    const at = destination.requests.map((r) => r.at);
    expect(at).toHaveLength(9);
    // The rate limit alone (a full bucket of 20) would send them back to back; halved, 10 a second: 100 ms apart
    // (91 ms once a second of successes grew it to 11; less the jitter of timers and arrival).
    // At the destination: the 8 requests after the 429 took at least 8 × ~90 ms (arrivals jitter one by one).
    expect((at.at(-1) ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(8 * 88);
    // As the attempts started (their recorded start times), each one at least ~90 ms after the one before.
    const starts = (await Promise.all(ids.map((id) => forwardsOf(running, id))))
      .flatMap(([f]) => f?.attempts.map((a) => Date.parse(a.startedAt)) ?? [])
      .sort((x, y) => x - y);
    expect(starts).toHaveLength(9);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] ?? t));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(88);
    const metrics = await fetch(`${running.url}/metrics`, { headers: running.auth }).then((r) => r.text());
    expect(metrics).toMatch(/reception_destination_send_rate\{destination="app"\} 1[01]/);
  });

  it('validates breaker settings: bounds, unknown keys, and none on a pull destination', () => {
    const problems = validateConfig({
      destinations: {
        app: { url: 'http://example.com/', breaker: { failures: 0, cooldownSeconds: 601 } },
        typo: { url: 'http://example.com/', breaker: { failure: 3 } },
        pulled: { pull: true, breaker: { failures: 3 } },
      },
      sources: {},
    }).join('\n');
    expect(problems).toContain('destinations.app.breaker.failures');
    expect(problems).toContain('destinations.app.breaker.cooldownSeconds');
    expect(problems).toContain('destinations.typo.breaker');
    expect(problems).toContain('destinations.pulled.breaker: only a destination with a url takes "breaker"');
    expect(
      validateConfig({ destinations: { ok: { url: 'http://example.com/', breaker: { cooldownSeconds: 0.5 } } }, sources: {} }),
    ).toEqual([]);
  });
});
