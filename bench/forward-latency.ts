import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { MEASURED_SOURCE, type StartCommand } from './cases.js';
import { stopChild } from './child-processes.js';
import {
  forwardingReception,
  profileFlags,
  subdir,
  type ForwardCase,
  type ForwardContext,
  type IngestOnly,
} from './forward-cases.js';
import { BENCH_DATABASE_URL, benchSchema, dropBenchSchema, postgresUnavailable } from './postgres-schema.js';
import { cpuSeconds } from './process-stats.js';
import { startServer, type ServerUnderTest } from './server-process.js';

/**
 * Forwarding latency (issue 30): webhooks sent open loop at a steady rate
 * (each at its own time, whether or not the earlier ones were answered) to
 * a source that forwards to one HTTP destination, which answers 200 at once.
 * Measured per webhook: from the send to the destination's receipt, on one
 * clock (sender and destination are both in the bench's process). Beside
 * Reception on SQLite and on PostgreSQL, the floor: a relay that answers and
 * POSTs on, storing nothing (bench/forward-relay.ts).
 * BENCH_LATENCY_RATES (100,300,1000 per second), BENCH_LATENCY_SECONDS (10 per rate).
 */

const RELAY_SERVER = new URL('./forward-relay.js', import.meta.url).pathname;
/** How long the webhooks of a window may take to reach the destination after it, at most. */
const DRAIN_LIMIT_MS = 60_000;

export interface LatencyRow {
  target: string;
  rate: number;
  sent: number;
  answered2xx: number;
  /** Send to the answer, ms. */
  answerP50: number;
  answerP99: number;
  /** Send to the destination's receipt, ms. */
  p50: number;
  p99: number;
  max: number;
  /** Sent but not yet at the destination, at the middle and at the end of the window. */
  backlogMiddle: number;
  backlogEnd: number;
  /** After the window: how long the last ones took to arrive. */
  drainSeconds: number;
  /** Server CPU in the window per webhook, µs. */
  cpuUs?: number;
  /** Sent in the window and never received. */
  missing: number;
}

export interface LatencyResult {
  kind: 'latency';
  name: string;
  description: string;
  rows: LatencyRow[];
  /** Not used by this case (its floor is the relay), kept for the report's shape. */
  ingestOnly?: IngestOnly;
  check: string;
  error?: string;
}

interface Target {
  name: string;
  start(context: ForwardContext, destinationUrl: string): StartCommand;
  unavailable?: () => Promise<string | undefined>;
  cleanup?: (context: ForwardContext) => Promise<void>;
}

const relay: Target = {
  name: 'relay (floor)',
  start: (context, destinationUrl) => ({
    command: process.execPath,
    args: [...profileFlags(context, 'relay'), RELAY_SERVER],
    env: { BARE_PORT: '0', BARE_HOST: '127.0.0.1', RELAY_TO: `${destinationUrl}/hook` },
  }),
};

const sqlite: Target = {
  name: 'reception sqlite',
  start: (context, destinationUrl) =>
    forwardingReception(context, destinationUrl, false, profileFlags(context, 'reception-sqlite')),
};

const postgres: Target = {
  name: 'reception postgres',
  start: (context, destinationUrl) => {
    const command = forwardingReception(context, destinationUrl, false, profileFlags(context, 'reception-postgres'));
    return {
      ...command,
      env: { ...command.env, RECEPTION_DATABASE_URL: BENCH_DATABASE_URL, RECEPTION_DATABASE_SCHEMA: benchSchema(context.dir) },
    };
  },
  unavailable: postgresUnavailable,
  cleanup: ({ dir }) => dropBenchSchema(dir),
};

/** The destination: answers 200 at once and notes when each webhook (its `"n"`) arrived. */
class Destination {
  readonly arrived = new Map<number, number>();
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const n = /"n":(\d+)/.exec(Buffer.concat(chunks).subarray(0, 64).toString('latin1'))?.[1];
      if (n !== undefined && !this.arrived.has(Number(n))) this.arrived.set(Number(n), at);
      res.writeHead(200).end();
    });
  });

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Sends webhooks numbered from `next` open loop, and keeps when each was sent and answered. */
class Sender {
  next = 0;
  readonly sentAt = new Map<number, number>();
  readonly answeredAt = new Map<number, number>();
  answered2xx = 0;
  private readonly pool: Pool;
  private readonly pad: string;

  constructor(url: string, bodyBytes: number) {
    this.pool = new Pool(url, { connections: 512, pipelining: 1 });
    this.pad = 'x'.repeat(Math.max(0, bodyBytes - 40));
  }

  send(): number {
    const n = this.next++;
    const body = `{"n":${n},"pad":"${this.pad}"}`;
    this.sentAt.set(n, performance.now());
    this.pool
      .request({ method: 'POST', path: `/api/webhook/${MEASURED_SOURCE}`, headers: { 'content-type': 'application/json' }, body })
      .then(async (response) => {
        await response.body.dump();
        this.answeredAt.set(n, performance.now());
        if (response.statusCode >= 200 && response.statusCode < 300) this.answered2xx++;
      })
      .catch(() => undefined);
    return n;
  }

  /** Sends at `rate` per second for `seconds`, each webhook at its own time; answers the numbers sent. */
  async openLoop(rate: number, seconds: number, middle: () => void): Promise<{ from: number; to: number }> {
    const from = this.next;
    const started = performance.now();
    const total = Math.round(rate * seconds);
    let middleTaken = false;
    while (this.next - from < total) {
      const elapsed = performance.now() - started;
      const due = Math.min(total, Math.floor((elapsed * rate) / 1000) + 1);
      while (this.next - from < due) this.send();
      if (!middleTaken && elapsed >= (seconds * 1000) / 2) {
        middleTaken = true;
        middle();
      }
      await sleep(1);
    }
    return { from, to: this.next };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function missingIn(destination: Destination, from: number, to: number): number {
  let missing = 0;
  for (let n = from; n < to; n++) if (!destination.arrived.has(n)) missing++;
  return missing;
}

async function measureRate(
  target: Target,
  server: ServerUnderTest,
  sender: Sender,
  destination: Destination,
  rate: number,
  seconds: number,
): Promise<LatencyRow> {
  const cpuBefore = cpuSeconds(server.child.pid);
  let backlogMiddle = 0;
  const first = sender.next;
  const window = await sender.openLoop(rate, seconds, () => {
    backlogMiddle = missingIn(destination, first, sender.next);
  });
  const cpuAfter = cpuSeconds(server.child.pid);
  const backlogEnd = missingIn(destination, window.from, window.to);
  const ended = performance.now();
  while (missingIn(destination, window.from, window.to) > 0 && performance.now() - ended < DRAIN_LIMIT_MS) await sleep(20);
  const drainSeconds = (performance.now() - ended) / 1000;
  const latencies: number[] = [];
  const answers: number[] = [];
  for (let n = window.from; n < window.to; n++) {
    const sent = sender.sentAt.get(n) ?? Number.NaN;
    const arrived = destination.arrived.get(n);
    const answered = sender.answeredAt.get(n);
    if (arrived !== undefined) latencies.push(arrived - sent);
    if (answered !== undefined) answers.push(answered - sent);
  }
  latencies.sort((a, b) => a - b);
  answers.sort((a, b) => a - b);
  const sent = window.to - window.from;
  return {
    target: target.name,
    rate,
    sent,
    answered2xx: answers.length,
    answerP50: percentile(answers, 50),
    answerP99: percentile(answers, 99),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    backlogMiddle,
    backlogEnd,
    drainSeconds,
    ...(cpuBefore === undefined || cpuAfter === undefined ? {} : { cpuUs: ((cpuAfter - cpuBefore) * 1e6) / sent }),
    missing: sent - latencies.length,
  };
}

async function runTarget(
  target: Target,
  context: ForwardContext,
  rates: readonly number[],
  seconds: number,
  problems: string[],
): Promise<LatencyRow[]> {
  const unavailable = await target.unavailable?.();
  if (unavailable !== undefined) {
    problems.push(`forward latency, ${target.name}: not run: ${unavailable}`);
    return [];
  }
  const own = { ...context, dir: subdir(context, target.name.replace(/\W+/g, '-')) };
  const destination = new Destination();
  const destinationUrl = await destination.listen();
  const server = await startServer(target.start(own, destinationUrl), subdir(own, 'server'));
  const sender = new Sender(server.url, context.body.length);
  const rows: LatencyRow[] = [];
  try {
    // Warm-up: connections opened, code compiled, the destination's pool filled.
    await sender.openLoop(100, Math.max(1, context.warmupSeconds), () => undefined);
    await sleep(1000);
    for (const rate of rates) {
      context.settleDisk();
      const row = await measureRate(target, server, sender, destination, rate, seconds);
      rows.push(row);
      process.stderr.write(
        `bench: forward latency, ${target.name} at ${rate}/s: p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, ` +
          `backlog at the end ${row.backlogEnd}\n`,
      );
      if (row.missing > 0)
        problems.push(`forward latency, ${target.name} at ${rate}/s: ${row.missing} webhooks never reached the destination`);
      if (row.answered2xx < row.sent)
        problems.push(`forward latency, ${target.name} at ${rate}/s: ${row.sent - row.answered2xx} not answered 2xx`);
    }
  } finally {
    await sender.close();
    await stopChild(server.child, 'SIGTERM', 10_000);
    await destination.close();
    await target.cleanup?.(own).catch(() => undefined);
  }
  return rows;
}

function rates(): number[] {
  const text = process.env.BENCH_LATENCY_RATES ?? '100,300,1000';
  const list = text.split(',').map((part) => Number(part.trim()));
  if (list.some((rate) => !Number.isFinite(rate) || rate <= 0))
    throw new Error(`BENCH_LATENCY_RATES: "${text}" is not a list of rates`);
  return list;
}

export const LATENCY_CASE: ForwardCase = {
  name: 'forward latency',
  description:
    'open loop at steady rates to a source forwarding to one HTTP destination; send-to-receipt p50/p99 beside a relay that stores nothing',
  async run(context, problems): Promise<LatencyResult> {
    const seconds = Number(process.env.BENCH_LATENCY_SECONDS ?? '10');
    const rows: LatencyRow[] = [];
    for (const target of [relay, sqlite, postgres]) rows.push(...(await runTarget(target, context, rates(), seconds, problems)));
    const lost = rows.reduce((sum, row) => sum + row.missing, 0);
    return {
      kind: 'latency',
      name: this.name,
      description: this.description,
      rows,
      check: lost === 0 ? 'every webhook sent reached the destination' : `${lost} webhooks never reached the destination`,
    };
  },
};

const ms = (value: number): string => (Number.isNaN(value) ? '-' : value < 10 ? value.toFixed(1) : value.toFixed(0));

/** The latency table, each Reception row with its p99 as a multiple of the relay's at the same rate. */
export function latencyLines(result: LatencyResult): string[] {
  const relayP99 = new Map(result.rows.filter((r) => r.target === relay.name).map((r) => [r.rate, r.p99]));
  return [
    `- ${result.name}: ${result.description}; backlog = sent in the window but not yet at the destination, at its middle and its end`,
    ...(result.error === undefined ? [] : [`- failed: ${result.error}`]),
    '',
    '| target | rate/s | sent | answer p50 / p99 ms | send to destination p50 / p99 / max ms | p99 vs relay | backlog middle / end | drain s | server CPU µs per webhook |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...result.rows.map((r) => {
      const floor = relayP99.get(r.rate);
      const ratio = r.target === relay.name || floor === undefined ? '' : `${(r.p99 / floor).toFixed(1)}x`;
      return (
        `| ${r.target} | ${r.rate} | ${r.sent} | ${ms(r.answerP50)} / ${ms(r.answerP99)} | ${ms(r.p50)} / ${ms(r.p99)} / ${ms(r.max)} | ` +
        `${ratio} | ${r.backlogMiddle} / ${r.backlogEnd} | ${r.drainSeconds.toFixed(1)} | ${r.cpuUs === undefined ? '-' : r.cpuUs.toFixed(0)} |`
      );
    }),
    '',
    `- check: ${result.check}`,
  ];
}
