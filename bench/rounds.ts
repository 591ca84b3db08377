import type { DiskProbeResult } from './disk-probe.js';
import type { LoadResult } from './load.js';
import type { CaseResult } from './report.js';

/**
 * Several rounds of the same cases, folded into one row per case.
 *
 * Why rounds: on a virtual machine a single run of a case is a draw. On the
 * 2 × EPYC machine of the fifth session the same build of the `full` case
 * measured a p99 of 12.8 ms in one run and 490 ms in the next, minutes
 * apart (fsyncs that stall for hundreds of milliseconds now and then). Every
 * case runs once per round, in the same order, and each round's ratios are
 * taken to that round's bare server, so that a slow minute weighs on both
 * sides of a ratio. The row then shows the median of each figure over the
 * rounds, and the spread of p99.
 */

/** The median of some numbers (the mean of the middle two for an even count); undefined for none. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}

function medianOf<T>(items: readonly T[], pick: (item: T) => number | undefined): number | undefined {
  return median(items.map(pick).filter((value): value is number => value !== undefined));
}

/** The load figures of several runs: counts summed, rates and latencies their medians. */
function combineLoads(loads: readonly LoadResult[]): LoadResult {
  const sum = (pick: (load: LoadResult) => number): number => loads.reduce((total, load) => total + pick(load), 0);
  return {
    seconds: sum((l) => l.seconds),
    responses: sum((l) => l.responses),
    ok: sum((l) => l.ok),
    non2xx: sum((l) => l.non2xx),
    socketErrors: sum((l) => l.socketErrors),
    timeouts: sum((l) => l.timeouts),
    requestsPerSecond: medianOf(loads, (l) => l.requestsPerSecond) ?? 0,
    p50Ms: medianOf(loads, (l) => l.p50Ms) ?? 0,
    p99Ms: medianOf(loads, (l) => l.p99Ms) ?? 0,
  };
}

/** The disk probes of every round: syncs and slow ones summed, the slowest of all. */
function combineDisk(measured: readonly CaseResult[]): DiskProbeResult | undefined {
  const probes = measured.map((r) => r.disk).filter((d) => d !== undefined);
  if (probes.length === 0) return undefined;
  return {
    syncs: probes.reduce((total, d) => total + d.syncs, 0),
    slow: probes.reduce((total, d) => total + d.slow, 0),
    maxMs: Math.max(...probes.map((d) => d.maxMs)),
  };
}

/** What the stored-versus-acknowledged checks of every round say together. */
function combineStoreChecks(measured: readonly CaseResult[]): string {
  const failed = measured.findIndex((r) => r.storeCheck.startsWith('**'));
  if (failed !== -1) return `round ${failed + 1}: ${measured[failed]?.storeCheck ?? ''}`;
  if (measured.some((r) => r.stored === undefined || r.load === undefined)) return measured[0]?.storeCheck ?? '–';
  const stored = measured.reduce((total, r) => total + (r.stored ?? 0), 0);
  const acknowledged = measured.reduce((total, r) => total + (r.load?.ok ?? 0), 0);
  return `ok in ${measured.length} rounds: ${stored} stored = ${acknowledged} acknowledged + ${stored - acknowledged} in flight at the stops`;
}

/**
 * One case's results over the rounds, as one row: medians of the figures
 * and of each round's ratios, the largest peak RSS, and the p99 range. A
 * round that failed is left out of the figures and named in `failedRounds`;
 * if every round failed, the row is the first failure.
 */
export function combineRounds(results: readonly CaseResult[]): CaseResult {
  const first = results[0];
  if (first === undefined) throw new Error('combineRounds: no result');
  if (results.length === 1) return first;
  const measured = results.filter((r) => r.load !== undefined);
  const failedRounds = results.flatMap((r, index) => (r.load === undefined ? [index + 1] : []));
  if (measured.length === 0) return first.skipped === undefined ? { ...first, rounds: [...results], failedRounds } : first;
  const loads = measured.map((r) => r.load as LoadResult);
  const p99s = loads.map((l) => l.p99Ms);
  const versus = measured.map((r) => r.versus).filter((v) => v !== undefined);
  const peaks = measured.map((r) => r.peakRssBytes).filter((v): v is number => v !== undefined);
  const combined: CaseResult = {
    name: first.name,
    description: first.description,
    ok: results.every((r) => r.ok),
    load: combineLoads(loads),
    p99RangeMs: [Math.min(...p99s), Math.max(...p99s)],
    peakRssBytes: peaks.length === 0 ? undefined : Math.max(...peaks),
    serverCpuPercent: medianOf(measured, (r) => r.serverCpuPercent),
    disk: combineDisk(measured),
    stored: measured.every((r) => r.stored !== undefined) ? measured.reduce((total, r) => total + (r.stored ?? 0), 0) : undefined,
    storeCheck: combineStoreChecks(measured),
    exit: results.find((r) => r.exit !== 0)?.exit ?? first.exit,
    requestsPerSecondVsBaseline: medianOf(measured, (r) => r.requestsPerSecondVsBaseline),
    p99VsBaseline: medianOf(measured, (r) => r.p99VsBaseline),
    rounds: [...results],
  };
  const versusName = versus[0]?.name;
  if (versusName !== undefined) {
    combined.versus = {
      name: versusName,
      requestsPerSecond: median(versus.map((v) => v.requestsPerSecond)) ?? 0,
      p99: medianOf(versus, (v) => v.p99),
    };
  }
  if (failedRounds.length > 0) combined.failedRounds = failedRounds;
  return combined;
}
