import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { runToEnd, stopChild, type Child } from './child-processes.js';
import type { LoopDelayReport } from './event-loop-delay.js';
import { BENCH_DATABASE_URL, benchSchema, dropBenchSchema, postgresUnavailable } from './postgres-schema.js';
import { startServer } from './server-process.js';

/**
 * `npm run bench:refusals`: what keeping refusals (CONTRACT 9) costs the
 * deliveries sent beside a flood of bad requests. For each store and round,
 * three runs of BENCH_SECONDS on a fresh server (durability full): one
 * sender posts a 1 KiB delivery, waits for its 200, sleeps 5 ms, and so on,
 * timed; in "flood, kept" and "flood, not kept" wrk floods the same server
 * with 415s (text, not JSON) on FLOOD_CONNECTIONS connections, with the
 * refusals kept (RECEPTION_REFUSALS_KEEP=1000, so that the measured window
 * is in the regime where every write also deletes as many) or not kept at
 * all (0). "flood, not kept" against "flood, kept" is the cost of keeping;
 * "alone" against both is the flood's own cost. The server's event loop
 * delay comes from the preloaded probe (event-loop-delay.ts).
 *
 * BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_STORES (sqlite,postgres),
 * BENCH_MAIN (another build's dist/src/main.js).
 */

const MAIN = process.env.BENCH_MAIN ?? fileURLToPath(new URL('../src/main.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./event-loop-delay.js', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? '10');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const STORES = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',').map((s) => s.trim());
const TOKEN = 'refusal-bench-token-0123456789';
const FLOOD_CONNECTIONS = 32;
const KEEP = 1000;

interface Mode {
  name: string;
  flood: boolean;
  keep: number;
}

const MODES: readonly Mode[] = [
  { name: 'alone', flood: false, keep: KEEP },
  { name: 'flood, kept', flood: true, keep: KEEP },
  { name: 'flood, not kept', flood: true, keep: 0 },
];

interface Run {
  deliveries: number;
  p50: number;
  p99: number;
  max: number;
  floodPerSecond: number;
  kept: number;
  dropped: number;
  loop: LoopDelayReport;
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)] ?? Number.NaN;

/** wrk posting the same refused request for `seconds`; answers requests per second. */
async function flood(url: string, dir: string, seconds: number): Promise<number> {
  const script = join(dir, 'flood.lua');
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.body = "not json at all, refused with 415"
wrk.headers["Content-Type"] = "text/plain"
done = function(summary, latency, requests)
  io.write(string.format('BENCH_RESULT %.0f %.0f\\n', summary.requests, summary.duration))
end
`,
  );
  const stdout = await runToEnd(
    'wrk',
    ['-t', '2', '-c', String(FLOOD_CONNECTIONS), '-d', `${seconds}s`, '-s', script, `${url}/api/webhook/flood`],
    (seconds + 30) * 1000,
  );
  const match = /BENCH_RESULT (\d+) (\d+)/.exec(stdout);
  if (match === null) throw new Error(`wrk printed no result:\n${stdout}`);
  return Number(match[1]) / (Number(match[2]) / 1e6);
}

/** One delivery after another, 5 ms apart, until `stop`; their latencies in ms. */
async function deliver(url: string, stop: () => boolean): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = Buffer.from(`{"pad":"${'x'.repeat(1000)}","n":0}`);
  const latencies: number[] = [];
  try {
    while (!stop()) {
      const started = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          `${url}/api/webhook/beside`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      if (status !== 200) throw new Error(`a delivery was answered ${status}`);
      latencies.push(performance.now() - started);
      await sleep(5);
    }
  } finally {
    agent.destroy();
  }
  return latencies;
}

/** A counter's total from /metrics. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) total += Number(line.split(' ').at(-1));
  return total;
}

async function loopDelay(child: Child, file: string, report: number): Promise<LoopDelayReport> {
  child.process.kill('SIGUSR2');
  for (;;) {
    if (existsSync(file)) {
      const written = JSON.parse(readFileSync(file, 'utf8')) as LoopDelayReport;
      if (written.report === report) return written;
    }
    await sleep(20);
  }
}

async function measure(store: string, mode: Mode): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'reception-refusal-bench-'));
  const delayFile = join(dir, 'loop-delay.json');
  const env: Record<string, string> = {
    RECEPTION_PORT: '0',
    RECEPTION_HOST: '127.0.0.1',
    RECEPTION_DATA: join(dir, 'data'),
    RECEPTION_TOKEN: TOKEN,
    RECEPTION_DURABILITY: 'full',
    RECEPTION_REFUSALS_KEEP: String(mode.keep),
    BENCH_LOOP_DELAY_FILE: delayFile,
  };
  if (store === 'postgres') {
    env.RECEPTION_DATABASE_URL = BENCH_DATABASE_URL;
    env.RECEPTION_DATABASE_SCHEMA = benchSchema(dir);
  }
  const server = await startServer({ command: process.execPath, args: ['--import', PROBE, MAIN], env }, dir);
  try {
    // Warm up: both kinds of request, a second.
    let warm = true;
    await Promise.all([
      flood(server.url, dir, 1),
      deliver(server.url, () => !warm).then(() => undefined),
      sleep(1000).then(() => (warm = false)),
    ]);
    // What the warm-up left in the writer's buffer is written (or dropped) before the measured window.
    for (let last = -1, now = 0; now !== last; await sleep(700)) {
      last = now;
      now =
        (await metric(server.url, 'reception_refusals_kept_total')) +
        (await metric(server.url, 'reception_refusals_dropped_total'));
    }
    const keptBefore = await metric(server.url, 'reception_refusals_kept_total');
    const droppedBefore = await metric(server.url, 'reception_refusals_dropped_total');
    await loopDelay(server.child, delayFile, 1);
    let running = true;
    const load = (mode.flood ? flood(server.url, dir, SECONDS) : sleep(SECONDS * 1000).then(() => 0)).finally(() => {
      running = false;
    });
    const [latencies, floodPerSecond] = await Promise.all([deliver(server.url, () => !running), load]);
    const loop = await loopDelay(server.child, delayFile, 2);
    const sorted = [...latencies].sort((a, b) => a - b);
    // The writer writes on a timer: what the flood left in its buffer is written (or dropped) by then.
    await sleep(1000);
    return {
      deliveries: latencies.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? Number.NaN,
      floodPerSecond,
      kept: (await metric(server.url, 'reception_refusals_kept_total')) - keptBefore,
      dropped: (await metric(server.url, 'reception_refusals_dropped_total')) - droppedBefore,
      loop,
    };
  } finally {
    await stopChild(server.child, 'SIGTERM', 15_000);
    if (store === 'postgres') await dropBenchSchema(dir).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.stdout.write(
    `Refusal flood, ${new Date().toISOString()}: ${MAIN}; durability full; ${SECONDS} s a run, ${ROUNDS} rounds; ` +
      `wrk -t2 -c${FLOOD_CONNECTIONS} of 415s; 1 sender of 1 KiB deliveries, 5 ms apart, timed\n\n`,
  );
  process.stdout.write(
    '| store | run | round | deliveries | p50 ms | p99 ms | max ms | flood req/s | refusals kept | dropped | loop stall max ms | loop delay p99 ms |\n' +
      '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n',
  );
  for (const store of STORES) {
    if (store === 'postgres') {
      const why = await postgresUnavailable();
      if (why !== undefined) {
        process.stderr.write(`skipping postgres: ${why}\n`);
        continue;
      }
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of MODES) {
        process.stderr.write(`measuring: ${store}, ${mode.name}, round ${round}\n`);
        const r = await measure(store, mode);
        process.stdout.write(
          `| ${store} | ${mode.name} | ${round} | ${r.deliveries} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} ` +
            `| ${mode.flood ? r.floodPerSecond.toFixed(0) : '—'} | ${r.kept} | ${r.dropped} | ${r.loop.maxMs.toFixed(0)} | ${r.loop.p99Ms.toFixed(0)} |\n`,
        );
      }
    }
  }
}

await main();
