import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { StartCommand } from '../cases.js';
import { stopChild } from '../child-processes.js';
import { jsonBody, type LoadGenerator } from '../load.js';
import { startServer } from '../server-process.js';

export interface IngestRun {
  /** Deliveries a second acknowledged (2xx) over the measured run. */
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /**
   * Seconds from the end of the load until a delivery sent then was found by
   * a search (`q`): how far search lagged behind. Undefined when not asked.
   */
  searchLagSeconds?: number;
}

export interface IngestOptions {
  generator: LoadGenerator;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  token: string;
  /** Measure how long a search takes to find a delivery sent right after the load (the current build only). */
  measureLag: boolean;
  /** Give up on the lag after this many seconds. */
  lagLimitSeconds: number;
}

/**
 * Starts a server, sends it 1 KiB JSON deliveries as fast as the load
 * generator can (as `npm run bench` does), and stops it.
 */
export async function measureIngest(start: StartCommand, dir: string, options: IngestOptions): Promise<IngestRun> {
  const server = await startServer(start, dir, 60_000);
  try {
    const request = {
      path: '/api/webhook/ingest',
      warmupPath: '/api/webhook/ingest-warmup',
      headers: { 'Content-Type': 'application/json' },
      body: jsonBody(1024),
    };
    const run = { request, connections: options.connections, workDir: dir };
    if (options.warmupSeconds > 0)
      await options.generator.run({ ...run, url: server.url + request.warmupPath, seconds: options.warmupSeconds });
    const load = await options.generator.run({ ...run, url: server.url + request.path, seconds: options.seconds });
    const result: IngestRun = {
      perSecond: load.ok / load.seconds,
      p50Ms: load.p50Ms,
      p99Ms: load.p99Ms,
      errors: load.non2xx + load.socketErrors + load.timeouts,
    };
    if (options.measureLag) result.searchLagSeconds = await searchLag(server.url, options.token, options.lagLimitSeconds);
    return result;
  } finally {
    await stopChild(server.child, 'SIGTERM', 30_000);
  }
}

/** Sends one delivery with a word of its own, then searches for it until it is found. */
async function searchLag(url: string, token: string, limitSeconds: number): Promise<number | undefined> {
  const marker = `lagmarker${Date.now().toString(36)}`;
  const started = performance.now();
  const sent = await fetch(`${url}/api/webhook/lag`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'bench.lag', marker }),
  });
  if (sent.status !== 200) throw new Error(`the lag marker was answered ${sent.status}`);
  while ((performance.now() - started) / 1000 < limitSeconds) {
    const found = await fetch(`${url}/api/deliveries?q=${marker}&limit=1`, { headers: { authorization: `Bearer ${token}` } });
    const page = (await found.json()) as { items?: unknown[] };
    if ((page.items?.length ?? 0) > 0) return (performance.now() - started) / 1000;
    await sleep(250);
  }
  return undefined;
}
