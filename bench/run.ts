import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CASES, MEASURED_SOURCE, WARMUP_SOURCE, type BenchCase, type CaseContext, type LoadRequest } from './cases.js';
import { stopChild } from './child-processes.js';
import { measureDiskWriteRate, startDiskProbe, SLOW_SYNC_MS } from './disk-probe.js';
import type { ForwardCase, ForwardResult, IngestOnly } from './forward-cases.js';
import { DRAIN_CASE } from './forward-drain.js';
import { LATENCY_CASE } from './forward-latency.js';
import { forwardMarkdown } from './forward-report.js';
import { SUSTAINED_CASES } from './forward-sustained.js';
import { chooseLoadGenerator, jsonBody, type LoadGenerator } from './load.js';
import { cpuSeconds, peakRssBytes } from './process-stats.js';
import { summarizeProfiles } from './profile-summary.js';
import {
  compareCases,
  compareToBaseline,
  markdown,
  writeJson,
  type CaseResult,
  type ReadersResult,
  type RunReport,
} from './report.js';
import { combineRounds } from './rounds.js';
import { startServer, tail } from './server-process.js';
import { startStreamReaders, type RunningReaders } from './stream-readers.js';
import { describeDriver } from '../src/platform/db/sqlite/driver.js';

/**
 * `npm run bench`: starts each case's server as its own process, loads it,
 * checks that what was acknowledged was stored, and reports. Environment:
 * BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_WARMUP_SECONDS (2),
 * BENCH_ROUNDS (3: every case runs once per round; bench/rounds.ts),
 * BENCH_THREADS (load generator threads), BENCH_LOADGEN (wrk|autocannon),
 * BENCH_CASES (comma-separated parts of case names to run; one ending in `$` matches a name's end),
 * BENCH_BODY_BYTES (1024: the JSON body's size),
 * BENCH_CPU_PROF (a directory: run the servers under `node --cpu-prof`),
 * BENCH_KEEP=1 (keep the temp directory with logs and data).
 * The forwarding cases (bench/forward-cases.ts) run after the others, in
 * the first BENCH_FORWARD_ROUNDS rounds (1): BENCH_FORWARD_SECONDS (30) of
 * sustained load, and a backlog of BENCH_DRAIN_FORWARDS (100000) to drain.
 */

const LAST_RUN = fileURLToPath(new URL('../../bench/last-run.json', import.meta.url));

function whole(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}: expected a whole number from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

const seconds = whole('BENCH_SECONDS', 10, 1, 3600);
const connections = whole('BENCH_CONNECTIONS', 50, 1, 10_000);
const warmupSeconds = whole('BENCH_WARMUP_SECONDS', 2, 0, 600);
const rounds = whole('BENCH_ROUNDS', 3, 1, 20);
const threads = whole('BENCH_THREADS', Math.max(1, Math.min(4, Math.floor(cpus().length / 2))), 1, 64);
const profileDir = process.env.BENCH_CPU_PROF;
const keep = process.env.BENCH_KEEP === '1';
const forwardSeconds = whole('BENCH_FORWARD_SECONDS', 30, 1, 3600);
const drainForwards = whole('BENCH_DRAIN_FORWARDS', 100_000, 1, 10_000_000);
const forwardRounds = whole('BENCH_FORWARD_ROUNDS', 1, 0, 20);
/** The JSON body's size: 1 KiB, or 64 KiB and 1 MiB for the large-body measurements (issue 22). */
const bodyBytes = whole('BENCH_BODY_BYTES', 1024, 64, 5 * 1024 * 1024);
const FORWARD_CASES: readonly ForwardCase[] = [...SUSTAINED_CASES, DRAIN_CASE, LATENCY_CASE];
/** The case whose rate the forwarding cases are compared with: receiving alone, at the same durability. */
const INGEST_ONLY = 'reception durability=full';
const only = (process.env.BENCH_CASES ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter((s) => s.length > 0);

const slug = (name: string): string =>
  name
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();

function baseRequest(): LoadRequest {
  return {
    path: `/api/webhook/${MEASURED_SOURCE}`,
    warmupPath: `/api/webhook/${WARMUP_SOURCE}`,
    headers: { 'Content-Type': 'application/json' },
    body: jsonBody(bodyBytes),
  };
}

/** Starts, warms up, measures, checks and stops one case. Throws only if it could not be measured. */
async function measure(
  benchCase: BenchCase,
  label: string,
  context: CaseContext,
  generator: LoadGenerator,
  problems: string[],
): Promise<CaseResult> {
  const server = await startServer(benchCase.start(context), context.dir);
  const result: CaseResult = {
    name: benchCase.name,
    description: benchCase.description,
    ok: false,
    storeCheck: 'n/a (no store)',
  };
  let readers: RunningReaders | undefined;
  try {
    if (new URL(server.url).hostname !== '127.0.0.1') throw new Error(`server listens on ${server.url}, not 127.0.0.1`);
    if (benchCase.streamReaders !== undefined) {
      readers = await startStreamReaders(server.url, context.token, benchCase.streamReaders);
    }
    const request = benchCase.request?.(baseRequest()) ?? baseRequest();
    const run = { request, connections, workDir: context.dir };
    let warmedUp = 0;
    if (warmupSeconds > 0) {
      const warm = await generator.run({ ...run, url: server.url + request.warmupPath, seconds: warmupSeconds });
      if (warm.ok === 0) throw new Error(`warm-up got no 2xx answer (${warm.non2xx} non-2xx, ${warm.socketErrors} errors)`);
      warmedUp = warm.ok;
    }
    const probe = await startDiskProbe(context.dir);
    const cpuBefore = cpuSeconds(server.child.pid);
    const wallBefore = performance.now();
    const load = await generator.run({ ...run, url: server.url + request.path, seconds }).finally(async () => {
      result.disk = await probe.stop();
    });
    const cpuAfter = cpuSeconds(server.child.pid);
    const wall = (performance.now() - wallBefore) / 1000;
    result.load = load;
    if (cpuBefore !== undefined && cpuAfter !== undefined) result.serverCpuPercent = (100 * (cpuAfter - cpuBefore)) / wall;

    if (readers !== undefined && cpuBefore !== undefined) {
      result.readers = await waitForReaders(readers, warmedUp + load.ok, load.ok, server.child.pid, cpuBefore);
    }
    if (load.ok === 0) problems.push(`${label}: no 2xx answer at all`);
    if (load.non2xx > 0 || load.socketErrors > 0 || load.timeouts > 0) {
      problems.push(
        `${label}: ${load.non2xx} non-2xx answers, ${load.socketErrors} socket errors, ${load.timeouts} timeouts (see ${server.stdoutFile})`,
      );
    }
    if (benchCase.storedCount !== undefined) {
      const stored = await benchCase.storedCount(server.url, context);
      result.stored = stored;
      const extra = stored - load.ok;
      if (stored < load.ok) {
        result.storeCheck = `**LOST ${load.ok - stored}**: ${stored} stored, ${load.ok} acknowledged`;
        problems.push(`${label}: acknowledged ${load.ok} deliveries but stored only ${stored}`);
      } else if (extra > connections) {
        result.storeCheck = `**${stored} stored > ${load.ok} acknowledged + ${connections} in flight**`;
        problems.push(
          `${label}: stored ${stored}, more than the ${load.ok} acknowledged plus ${connections} in flight at the stop`,
        );
      } else {
        result.storeCheck = `ok: ${stored} stored = ${load.ok} acknowledged + ${extra} in flight at stop`;
      }
    }
    if (readers !== undefined) {
      const got = await readers.stop();
      readers = undefined;
      result.storeCheck += `; ${got.readers} stream readers got ${got.minEvents} to ${got.maxEvents} events of ${result.readers?.expected ?? '?'}, ${got.ended} disconnected`;
      if (got.ended > 0) problems.push(`${label}: ${got.ended} of ${got.readers} stream readers were disconnected`);
    }
    result.peakRssBytes = peakRssBytes(server.child.pid);
    result.ok = true;
    return result;
  } finally {
    await readers?.stop().catch(() => undefined);
    result.exit = await stopChild(server.child, 'SIGTERM', 15_000);
    if (result.exit !== 0) {
      problems.push(`${label}: server did not exit cleanly after SIGTERM (${result.exit})\n${tail(server.stderrFile)}`);
    }
  }
}

/**
 * After the load, waits until every stream reader got every acknowledged
 * delivery (at most READERS_DRAIN_MS, or until they stop getting any for
 * 5 s), and reads the server's CPU then: a server that let its readers
 * fall behind during the run pays for sending them the rest here, so the
 * CPU per delivery counted up to that point is what the fan-out costs.
 */
async function waitForReaders(
  readers: RunningReaders,
  expected: number,
  measured: number,
  pid: number | undefined,
  cpuBefore: number,
): Promise<ReadersResult> {
  const start = performance.now();
  let got = await readers.progress();
  const atLoadEnd = got.minEvents;
  let movedAt = start;
  while (got.minEvents < expected && performance.now() - start < READERS_DRAIN_MS && performance.now() - movedAt < 5000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await readers.progress();
    if (next.minEvents > got.minEvents) movedAt = performance.now();
    got = next;
  }
  const caughtUpAt = performance.now();
  const cpu = pid === undefined ? undefined : cpuSeconds(pid);
  return {
    expected,
    atLoadEnd,
    caughtUp: got.minEvents >= expected,
    drainSeconds: atLoadEnd >= expected ? 0 : (caughtUpAt - start) / 1000,
    ...(cpu === undefined ? {} : { cpuUsPerDeliveryWithDrain: ((cpu - cpuBefore) * 1e6) / Math.max(1, measured) }),
  };
}

const READERS_DRAIN_MS = 60_000;

/**
 * Writes the file system's dirty pages out before the next case starts:
 * otherwise the kernel's writeback of one
 * case's hundreds of MiB slows the fsyncs of the next (the stripe case,
 * measured after two store cases, ran at 0.63 of the full case in one run
 * and at 0.88 when it ran right after it).
 */
function settle(): void {
  spawnSync('sync', { stdio: 'ignore', timeout: 60_000 });
}

async function main(): Promise<number> {
  // A part ending in `$` matches the end of a name: `reception durability=full$` leaves out the case with stream readers.
  const selected = (c: { name: string; optional?: boolean }): boolean =>
    (only.length === 0 && c.optional !== true) ||
    only.some((part) => (part.endsWith('$') ? c.name.endsWith(part.slice(0, -1)) : c.name.includes(part)));
  const cases = CASES.filter(selected);
  const forwardCases = forwardRounds === 0 ? [] : FORWARD_CASES.filter(selected);
  if (cases.length === 0 && forwardCases.length === 0) {
    throw new Error(
      `BENCH_CASES="${only.join(',')}" matches no case of: ${[...CASES, ...FORWARD_CASES].map((c) => c.name).join(', ')}`,
    );
  }
  const generator = chooseLoadGenerator(threads);
  const runDir = mkdtempSync(join(tmpdir(), 'reception-bench-'));
  const token = randomBytes(24).toString('hex');
  // Every wait inside is bounded; this bounds the whole run as well.
  const forwardBudgetS =
    forwardCases.length * (2 * (warmupSeconds + forwardSeconds) + 600) + 4 * Math.max(120, drainForwards * 0.005);
  const budgetMs =
    (rounds * cases.length * (2 * (warmupSeconds + seconds) + 150) + Math.min(rounds, forwardRounds) * forwardBudgetS) * 1000;
  const overTime = setTimeout(() => {
    process.stderr.write(`bench: over its time budget of ${budgetMs / 1000} s, stopping\n`);
    process.exit(1);
  }, budgetMs);

  const cpuList = cpus();
  const report: RunReport = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      sqliteDriver: describeDriver(),
      cpu: `${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown CPU'}`,
      loadAverageAtStart: loadavg(),
      loadGenerator: generator.label,
      loadGeneratorNotes: generator.notes,
      connections,
      seconds,
      warmupSeconds,
      rounds,
      bodyBytes: jsonBody(bodyBytes).length,
      receptionLogs: `RECEPTION_LOG_LEVEL=info, stdout (one JSON line per request) to a file: ${runDir}/<case>${rounds === 1 ? '' : '-round-<n>'}/stdout.log`,
      profiled: profileDir !== undefined,
    },
    cases: [],
    forwarding: [],
    problems: [],
  };
  if (forwardCases.length > 0) Object.assign(report.meta, { forwardSeconds, drainForwards, forwardRounds });
  process.stdout.write(
    `bench: ${generator.label}, ${connections} connections, ${warmupSeconds} s warm-up + ${seconds} s per case, ${rounds} round${rounds === 1 ? '' : 's'}, work dir ${runDir}\n`,
  );

  const runCase = async (benchCase: BenchCase, round: number): Promise<CaseResult> => {
    const name = rounds === 1 ? slug(benchCase.name) : `${slug(benchCase.name)}-round-${round}`;
    const label = rounds === 1 ? benchCase.name : `${benchCase.name} (round ${round})`;
    const dir = join(runDir, name);
    mkdirSync(dir);
    const caseProfileDir = profileDir === undefined ? undefined : join(profileDir, name);
    const nodeFlags = caseProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${caseProfileDir}`];
    const skipped = await benchCase.unavailable?.();
    if (skipped !== undefined) {
      process.stdout.write(`bench: ${label}: skipped: ${skipped}\n`);
      return { name: benchCase.name, description: benchCase.description, ok: false, skipped, storeCheck: '–' };
    }
    process.stdout.write(`bench: ${label}...\n`);
    const context: CaseContext = { dir, token, nodeFlags };
    let result: CaseResult;
    try {
      result = await measure(benchCase, label, context, generator, report.problems);
      const log = join(dir, 'stdout.log');
      const disk =
        result.disk === undefined
          ? ''
          : `; disk probe: ${result.disk.slow} of ${result.disk.syncs} fsyncs over ${SLOW_SYNC_MS} ms, slowest ${result.disk.maxMs.toFixed(1)} ms`;
      const cpuPer =
        result.serverCpuPercent === undefined || result.load === undefined || result.load.ok === 0
          ? ''
          : `, server CPU ${((result.serverCpuPercent / 100) * 1e6 * (result.load.seconds / result.load.ok)).toFixed(1)} µs per 2xx`;
      const fanOut =
        result.readers === undefined
          ? ''
          : `; readers had ${result.readers.atLoadEnd} of ${result.readers.expected} events at the load's end, ${result.readers.caughtUp ? 'all' : '**not all**'} ${result.readers.drainSeconds.toFixed(1)} s later, server CPU ${result.readers.cpuUsPerDeliveryWithDrain?.toFixed(1) ?? '?'} µs per 2xx with that`;
      process.stdout.write(
        `bench: ${label}: ${Math.round(result.load?.requestsPerSecond ?? 0)} req/s, p99 ${result.load?.p99Ms.toFixed(2) ?? '?'} ms${cpuPer}${disk}${fanOut}; stdout log ${(statSync(log).size / 2 ** 20).toFixed(1)} MiB\n`,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      result = {
        name: benchCase.name,
        description: benchCase.description,
        ok: false,
        error: message.split('\n')[0],
        storeCheck: '–',
      };
      report.problems.push(`${label}: ${message}`);
    }
    await benchCase.cleanup?.(context).catch((error: unknown) => {
      report.problems.push(`${label}: cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
    });
    settle();
    if (caseProfileDir !== undefined) {
      try {
        process.stdout.write(summarizeProfiles(caseProfileDir));
      } catch (error) {
        process.stdout.write(`no profile for ${label}: ${String(error)}\n`);
      }
    }
    return result;
  };

  const runForwardCase = async (
    forwardCase: ForwardCase,
    round: number,
    ingestOnly: IngestOnly | undefined,
  ): Promise<ForwardResult> => {
    const name = `${slug(forwardCase.name)}-round-${round}`;
    const dir = join(runDir, name);
    mkdirSync(dir);
    const caseProfileDir = profileDir === undefined ? undefined : join(profileDir, name);
    process.stdout.write(`bench: ${forwardCase.name} (round ${round})...\n`);
    const context = {
      dir,
      token,
      generator,
      connections,
      warmupSeconds,
      seconds: forwardSeconds,
      drainForwards,
      body: jsonBody(1024),
      settleDisk: settle,
      ...(caseProfileDir === undefined ? {} : { profileDir: caseProfileDir }),
    };
    let result: ForwardResult;
    try {
      result = await forwardCase.run(context, report.problems);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      report.problems.push(`${forwardCase.name} (round ${round}): ${message}`);
      const failed = { name: forwardCase.name, description: forwardCase.description, check: '–', error: message.split('\n')[0] };
      result =
        forwardCase.name === LATENCY_CASE.name
          ? { kind: 'latency', rows: [], ...failed }
          : forwardCase.name === DRAIN_CASE.name
            ? {
                kind: 'drain',
                name: forwardCase.name,
                description: forwardCase.description,
                rows: [],
                check: '–',
                error: message.split('\n')[0],
              }
            : {
                kind: 'sustained',
                name: forwardCase.name,
                description: forwardCase.description,
                samples: [],
                check: '–',
                error: message.split('\n')[0],
              };
    }
    if (ingestOnly !== undefined) result.ingestOnly = ingestOnly;
    settle();
    process.stdout.write(forwardMarkdown([result]));
    if (caseProfileDir !== undefined && existsSync(caseProfileDir)) {
      for (const server of readdirSync(caseProfileDir)) {
        try {
          process.stdout.write(`${forwardCase.name}, ${server}: ${summarizeProfiles(join(caseProfileDir, server))}`);
        } catch (error) {
          process.stdout.write(`no profile for ${forwardCase.name}, ${server}: ${String(error)}\n`);
        }
      }
    }
    return result;
  };

  // Each round's ratios are taken within the round; the rows are then folded over the rounds.
  const perRound: CaseResult[][] = [];
  const forwardingByRound: ForwardResult[][] = [];
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) process.stdout.write(`bench: round ${round} of ${rounds}\n`);
    if (cases.length > 0) {
      const rate = measureDiskWriteRate(runDir);
      (report.meta.diskWriteRates ??= []).push(rate);
      process.stdout.write(
        `bench: disk: ${(rate.bytes / 2 ** 20).toFixed(0)} MiB in ${rate.blockBytes / 1024} KiB writes, each fdatasync'd, in ${rate.seconds.toFixed(2)} s: ${rate.mbPerSecond.toFixed(1)} MB/s\n`,
      );
      settle();
    }
    const results: CaseResult[] = [];
    for (const benchCase of cases) results.push(await runCase(benchCase, round));
    compareToBaseline(results, CASES[0]?.name);
    compareCases(results, CASES);
    perRound.push(results);
    if (round <= forwardRounds && forwardCases.length > 0) {
      const forwarding: ForwardResult[] = [];
      const base = results.find((r) => r.name === INGEST_ONLY);
      const ingestOnly =
        base?.load === undefined
          ? undefined
          : {
              name: base.name,
              requestsPerSecond: base.load.requestsPerSecond,
              ...(base.serverCpuPercent === undefined
                ? {}
                : { cpuUsPerDelivery: (base.serverCpuPercent / 100 / base.load.requestsPerSecond) * 1e6 }),
            };
      for (const forwardCase of forwardCases) forwarding.push(await runForwardCase(forwardCase, round, ingestOnly));
      forwardingByRound.push(forwarding);
      report.forwarding?.push(...forwarding);
    }
  }
  report.cases = cases.map((_, index) => combineRounds(perRound.map((results) => results[index] as CaseResult)));
  clearTimeout(overTime);
  report.meta.loadAverageAtEnd = loadavg();
  process.stdout.write(`\n${markdown(report)}`);
  forwardingByRound.forEach((results, index) => {
    process.stdout.write(`\n${forwardMarkdown(results, forwardingByRound.length > 1 ? index + 1 : undefined)}`);
  });
  writeJson(report, LAST_RUN);
  process.stdout.write(`\nwrote ${LAST_RUN}\n`);
  if (keep || report.problems.length > 0) {
    process.stdout.write(`kept ${runDir} (logs and data)\n`);
  } else {
    rmSync(runDir, { recursive: true, force: true });
  }
  return report.problems.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
