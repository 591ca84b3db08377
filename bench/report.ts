import { writeFileSync } from 'node:fs';
import { SLOW_SYNC_MS, type DiskProbeResult, type DiskWriteRate } from './disk-probe.js';
import type { ForwardResult } from './forward-cases.js';
import type { LoadResult } from './load.js';

/** What the report says about the run as a whole. */
export interface RunMeta {
  date: string;
  node: string;
  /** The SQLite driver that Reception and the prototype use on this Node. */
  sqliteDriver: string;
  cpu: string;
  loadAverageAtStart: number[];
  loadAverageAtEnd?: number[];
  loadGenerator: string;
  loadGeneratorNotes: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /** How many times every case ran; the report shows medians over them (bench/rounds.ts). */
  rounds: number;
  bodyBytes: number;
  receptionLogs: string;
  profiled: boolean;
  /** With forwarding cases: their settings (bench/run.ts). */
  forwardSeconds?: number;
  drainForwards?: number;
  forwardRounds?: number;
  /** The disk's sequential fdatasync'd write rate, measured before each round (bench/disk-probe.ts). */
  diskWriteRates?: DiskWriteRate[];
}

/** How far a case's stream readers were behind when the load ended (bench/run.ts, waitForReaders). */
export interface ReadersResult {
  /** Deliveries acknowledged during the warm-up and the measured run: events each reader should get. */
  expected: number;
  /** Events the slowest reader had when the load ended. */
  atLoadEnd: number;
  /** Whether every reader got them all in the time allowed. */
  caughtUp: boolean;
  /** How long after the load's end the slowest reader got the last one (0 when it had all at the end). */
  drainSeconds: number;
  /** The server's CPU from the start of the measured run to then, per 2xx of the measured run. */
  cpuUsPerDeliveryWithDrain?: number;
}

export interface CaseResult {
  name: string;
  description: string;
  ok: boolean;
  error?: string;
  /** Why the case was not run on this machine (not a failure). */
  skipped?: string;
  load?: LoadResult;
  peakRssBytes?: number;
  /** CPU the server used during the measured run, in % of one core. */
  serverCpuPercent?: number;
  /** The disk's fsyncs during the measured run, as a probe beside the server saw them (bench/disk-probe.ts). */
  disk?: DiskProbeResult;
  /** Deliveries read back from the store; absent for a server without one. */
  stored?: number;
  /** With stream readers: how far behind they were at the load's end, and what sending them the rest cost. */
  readers?: ReadersResult;
  /** Readable outcome of the stored-versus-acknowledged check. */
  storeCheck: string;
  /** How the server ended after SIGTERM. */
  exit?: number | string;
  /** Ratios to the baseline case (the bare server). */
  requestsPerSecondVsBaseline?: number;
  p99VsBaseline?: number;
  /** Ratios to the case this one is compared with (a verified case to its unverified twin). */
  versus?: { name: string; requestsPerSecond: number; p99?: number };
  /** With several rounds: the lowest and highest p99 of the rounds. */
  p99RangeMs?: [number, number];
  /** With several rounds: each round's own result, in order. */
  rounds?: CaseResult[];
  /** With several rounds: the rounds (from 1) in which the case could not be measured. */
  failedRounds?: number[];
}

export interface RunReport {
  meta: RunMeta;
  cases: CaseResult[];
  /** The forwarding cases of each round they ran in, in order. */
  forwarding?: ForwardResult[];
  problems: string[];
}

/** Fills in the ratios of every case to the baseline case (none when it was not run or failed). */
export function compareToBaseline(cases: CaseResult[], baselineName: string | undefined): void {
  const baseline = cases.find((c) => c.name === baselineName)?.load;
  if (baseline === undefined) return;
  for (const result of cases) {
    if (result.load === undefined) continue;
    result.requestsPerSecondVsBaseline = result.load.requestsPerSecond / baseline.requestsPerSecond;
    result.p99VsBaseline = baseline.p99Ms > 0 ? result.load.p99Ms / baseline.p99Ms : undefined;
  }
}

/** Fills in `versus` for each case that names another case to compare with (when both were measured). */
export function compareCases(cases: CaseResult[], pairs: ReadonlyArray<{ name: string; compareTo?: string }>): void {
  for (const { name, compareTo } of pairs) {
    const result = cases.find((c) => c.name === name);
    const other = cases.find((c) => c.name === compareTo)?.load;
    if (compareTo === undefined || result?.load === undefined || other === undefined) continue;
    result.versus = {
      name: compareTo,
      requestsPerSecond: result.load.requestsPerSecond / other.requestsPerSecond,
      p99: other.p99Ms > 0 ? result.load.p99Ms / other.p99Ms : undefined,
    };
  }
}

const dash = '–';
const fixed = (value: number | undefined, digits: number): string => (value === undefined ? dash : value.toFixed(digits));

function row(c: CaseResult): string {
  const l = c.load;
  const cells =
    l === undefined
      ? [
          c.name,
          c.skipped === undefined ? `failed: ${c.error ?? 'unknown'}` : `skipped: ${c.skipped}`,
          dash,
          dash,
          dash,
          dash,
          dash,
          dash,
          dash,
          dash,
          dash,
        ]
      : [
          c.name,
          Math.round(l.requestsPerSecond).toLocaleString('en-US'),
          fixed(l.p50Ms, 2),
          c.p99RangeMs === undefined
            ? fixed(l.p99Ms, 2)
            : `${fixed(l.p99Ms, 2)} (${fixed(c.p99RangeMs[0], 2)}–${fixed(c.p99RangeMs[1], 2)})`,
          `${l.non2xx} / ${l.socketErrors} / ${l.timeouts}`,
          fixed(c.peakRssBytes === undefined ? undefined : c.peakRssBytes / 2 ** 20, 0),
          c.serverCpuPercent === undefined ? dash : `${Math.round(c.serverCpuPercent)}%`,
          c.requestsPerSecondVsBaseline === undefined ? dash : `${fixed(c.requestsPerSecondVsBaseline, 2)}×`,
          c.p99VsBaseline === undefined ? dash : `${fixed(c.p99VsBaseline, 2)}×`,
          c.disk === undefined ? dash : `${c.disk.slow} / ${fixed(c.disk.maxMs, 0)}`,
          c.failedRounds === undefined ? c.storeCheck : `${c.storeCheck}; failed in round ${c.failedRounds.join(', ')}`,
        ];
  return `| ${cells.join(' | ')} |`;
}

/** The report as markdown: a few lines of context, the table, then any problem. */
export function markdown(report: RunReport): string {
  const m = report.meta;
  const lines = [
    `Reception load bench, ${m.date}`,
    '',
    `- machine: ${m.cpu}; Node ${m.node} with ${m.sqliteDriver}; load average ${m.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} at start, ${m.loadAverageAtEnd?.map((x) => x.toFixed(2)).join(' ') ?? '?'} at end`,
    `- load generator: ${m.loadGenerator}; ${m.connections} connections; ${m.seconds} s measured after ${m.warmupSeconds} s warm-up`,
    ...(m.rounds > 1
      ? [
          `- ${m.rounds} rounds: every case ran once per round, in the order below. Each figure is the median over the rounds (p99 with its lowest and highest in brackets); each ratio is the median of the ratios taken within each round (to that round's bare server, or to that round's case compared with); counts are summed`,
        ]
      : []),
    `- request: POST /api/webhook/bench, ${m.bodyBytes}-byte JSON object, Content-Type: application/json`,
    `- Reception logs: ${m.receptionLogs}`,
    `- notes: ${m.loadGeneratorNotes}; server CPU is % of one core during the measured run; disk probe: a 4 KiB write and fsync of a file beside the server's, every 20 ms during the measured run (bench/disk-probe.ts), counted when it took over ${SLOW_SYNC_MS} ms, with the slowest: a p99 measured while the disk stalls is the disk's`,
    ...diskRateLines(report),
    ...(m.profiled ? ['- **profiled run (--cpu-prof): numbers are slower than normal and not comparable**'] : []),
    '',
    `| case | req/s | p50 ms | p99 ms | non-2xx / errors / timeouts | peak RSS MiB | server CPU | req/s vs bare | p99 vs bare | disk probe: fsyncs > ${SLOW_SYNC_MS} ms / slowest ms | stored vs 2xx |`,
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
    ...report.cases.map(row),
  ];
  const versus = report.cases.filter((c) => c.versus !== undefined);
  if (versus.length > 0) {
    lines.push('');
    for (const c of versus) {
      const v = c.versus;
      if (v === undefined) continue;
      lines.push(
        `- ${c.name} vs ${v.name}: ${fixed(v.requestsPerSecond, 2)}× req/s, ${v.p99 === undefined ? dash : `${fixed(v.p99, 2)}×`} p99`,
      );
    }
  }
  const perRound = report.cases.filter((c) => cpuPerDelivery(c) !== undefined);
  if (perRound.length > 0) {
    lines.push(
      '',
      'Server CPU per 2xx (µs), each round; with stream readers, also counted until the slowest reader got every event:',
      '',
    );
    for (const c of perRound) {
      const rounds = c.rounds ?? [c];
      const cpu = rounds.map((r) => fixed(cpuPerDelivery(r), 1)).join(' / ');
      const readers = rounds.map((r) => r.readers).filter((r) => r !== undefined);
      const drained =
        readers.length === 0
          ? ''
          : `; with readers caught up: ${readers.map((r) => fixed(r.cpuUsPerDeliveryWithDrain, 1)).join(' / ')}; slowest reader at the load's end: ${readers.map((r) => `${r.atLoadEnd} of ${r.expected}`).join(', ')}, ${readers.map((r) => (r.caughtUp ? `all ${fixed(r.drainSeconds, 1)} s later` : '**never all**')).join(', ')}`;
      lines.push(`- ${c.name}: ${cpu}${drained}`);
    }
  }
  if (report.problems.length > 0) {
    lines.push('', '**Problems:**', ...report.problems.map((p) => `- ${p}`));
  }
  return `${lines.join('\n')}\n`;
}

/** The server's CPU in µs per 2xx answer of the measured run. */
function cpuPerDelivery(c: CaseResult): number | undefined {
  if (c.serverCpuPercent === undefined || c.load === undefined || c.load.ok === 0) return undefined;
  return ((c.serverCpuPercent / 100) * c.load.seconds * 1e6) / c.load.ok;
}

export function writeJson(report: RunReport, file: string): void {
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}

/** The disk's measured write rate, and each store case's body bytes per second against half of it (issue 22). */
function diskRateLines(report: RunReport): string[] {
  const rates = report.meta.diskWriteRates ?? [];
  if (rates.length === 0) return [];
  const sorted = rates.map((r) => r.mbPerSecond).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const block = (rates[0]?.blockBytes ?? 0) / 1024;
  const lines = [
    `- disk: sequential writes of ${block} KiB, each fdatasync'd, before each round: ${rates.map((r) => r.mbPerSecond.toFixed(1)).join(', ')} MB/s (median ${median.toFixed(1)}; half of it ${(median / 2).toFixed(1)} MB/s)`,
  ];
  for (const c of report.cases) {
    if (c.load === undefined || c.stored === undefined) continue;
    const mbPerSecond = (c.load.requestsPerSecond * report.meta.bodyBytes) / 1e6;
    lines.push(
      `  - ${c.name}: bodies stored at ${mbPerSecond.toFixed(1)} MB/s, ${(mbPerSecond / (median / 2)).toFixed(2)}× half the disk's rate`,
    );
  }
  return lines;
}
