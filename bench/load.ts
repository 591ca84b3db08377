import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { LoadRequest } from './cases.js';
import { autocannon, AUTOCANNON_BIN } from './load-autocannon.js';
import { wrk } from './load-wrk.js';

/** What one load run measured. Latencies are in milliseconds. */
export interface LoadResult {
  seconds: number;
  /** Responses received (any status). */
  responses: number;
  /** Responses with a 2xx status: what the server acknowledged. */
  ok: number;
  non2xx: number;
  /** Connect, read and write errors of the load generator. */
  socketErrors: number;
  timeouts: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LoadRun {
  /** Full URL on 127.0.0.1. */
  url: string;
  request: LoadRequest;
  connections: number;
  seconds: number;
  /** A directory for the generator's script or body file. */
  workDir: string;
}

export interface LoadGenerator {
  /** Name and version, for the report. */
  label: string;
  /** What its counts mean where they differ from the plain reading. */
  notes: string;
  run(run: LoadRun): Promise<LoadResult>;
}

/** The 1 KiB JSON object every request carries. */
export function jsonBody(bytes = 1024): Buffer {
  const head = '{"type":"bench.event","id":"evt_0001","data":{"padding":"';
  const tail = '"}}';
  const body = Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
  JSON.parse(body.toString('utf8'));
  return body;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * wrk when it is installed (C, one thread, little CPU), else autocannon run
 * as its own process. `BENCH_LOADGEN=wrk|autocannon` forces one.
 */
export function chooseLoadGenerator(threads: number): LoadGenerator {
  const wanted = process.env.BENCH_LOADGEN;
  if (wanted !== undefined && wanted !== 'wrk' && wanted !== 'autocannon') {
    throw new Error(`BENCH_LOADGEN: expected "wrk" or "autocannon", got "${wanted}"`);
  }
  const wrkBin = wanted === 'autocannon' ? undefined : onPath('wrk');
  if (wrkBin !== undefined) {
    const probe = spawnSync(wrkBin, ['-v'], { encoding: 'utf8', timeout: 2000 });
    // "wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer"
    const version =
      `${probe.stdout}${probe.stderr}`
        .split('\n')[0]
        ?.replace(/\s*Copyright.*$/, '')
        .trim() || 'wrk';
    return wrk(wrkBin, version, threads);
  }
  if (wanted === 'wrk') throw new Error('BENCH_LOADGEN=wrk but wrk is not on PATH');
  const probe = spawnSync(AUTOCANNON_BIN, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.status !== 0) throw new Error(`neither wrk nor ${AUTOCANNON_BIN} can run: ${probe.stderr}`);
  // prints "autocannon v8.0.0"
  return autocannon(probe.stdout.trim().split('\n')[0] ?? 'autocannon');
}
