import type { IngestRun } from './ingest.js';
import type { SizeReport, StoreReport } from './run.js';

/** The goal of a read (issue 19): under 100 ms at p95 on SQLite. */
const READ_GOAL_MS = 100;
/** The goals of ingest: at least 0.9 of the empty inbox, and of the build without the index. */
const INGEST_GOAL = 0.9;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const ms = (value: number): string => (value < 10 ? value.toFixed(1) : value.toFixed(0));
const rate = (value: number): string => Math.round(value).toLocaleString('en-US');

function ingestLine(store: StoreReport): string {
  const pick = (which: 'full' | 'empty' | 'baseline', field: keyof IngestRun): number =>
    median(store.ingest.map((round) => Number(round[which][field] ?? Number.NaN)).filter((v) => !Number.isNaN(v)));
  const full = pick('full', 'perSecond');
  const empty = pick('empty', 'perSecond');
  const baseline = pick('baseline', 'perSecond');
  const lags = store.ingest.flatMap((round) => [round.full.searchLagSeconds, round.empty.searchLagSeconds]);
  const lagText = lags.map((lag) => (lag === undefined ? '>300' : lag.toFixed(1))).join(', ');
  const goal = (ratio: number): string => `${ratio.toFixed(2)} ${ratio >= INGEST_GOAL ? '(met)' : '(**not met**)'}`;
  return (
    `| ${store.store} | ${rate(full)} | ${rate(empty)} | ${rate(baseline)} | ${goal(full / empty)} | ${goal(empty / baseline)} | ` +
    `${ms(pick('full', 'p99Ms'))} / ${ms(pick('empty', 'p99Ms'))} / ${ms(pick('baseline', 'p99Ms'))} | ${lagText} |`
  );
}

/** The run as Markdown, as bench/RESULTS.md records it. */
export function sizeMarkdown(report: SizeReport): string {
  const lines: string[] = [];
  const sqlite = report.stores.find((s) => s.store === 'sqlite');
  const postgres = report.stores.find((s) => s.store === 'postgres');
  lines.push(
    `Run of ${report.date}: ${report.size.toLocaleString('en-US')} deliveries per store, ${report.cpu}, Node ${report.node}, ` +
      `${report.sqliteDriver}, load average ${report.loadAverageAtStart.map((l) => l.toFixed(1)).join(' ')} at the start` +
      `${report.loadAverageAtEnd === undefined ? '' : ` and ${report.loadAverageAtEnd.map((l) => l.toFixed(1)).join(' ')} at the end`}; ` +
      `${report.totalSeconds === undefined ? '' : `${Math.round(report.totalSeconds / 60)} minutes in all; `}baseline build ${report.baseline}.`,
    '',
    '| store | deliveries | appended (s) | a second | indexed after (s) | a second | server start on it (s) |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const store of report.stores) {
    const { fill } = store;
    lines.push(
      `| ${store.store} | ${fill.deliveries.toLocaleString('en-US')} | ${fill.appendSeconds.toFixed(0)} | ${rate(fill.deliveries / fill.appendSeconds)} | ` +
        `${fill.indexSeconds.toFixed(0)} | ${fill.indexSeconds < 1 ? '-' : rate(fill.deliveries / fill.indexSeconds)} | ${store.startSeconds.toFixed(1)} |`,
    );
  }
  lines.push(
    '',
    `Reads on the full inbox, ${sqlite?.reads[0]?.requests ?? postgres?.reads[0]?.requests ?? 0} requests each over HTTP, one at a time (ms):`,
    '',
  );
  lines.push(
    '| read | SQLite p50 | SQLite p95 | goal (< 100 ms p95) | PostgreSQL p50 | PostgreSQL p95 |',
    '|---|---:|---:|---|---:|---:|',
  );
  const names = (sqlite ?? postgres)?.reads.map((r) => r.name) ?? [];
  for (const name of names) {
    const s = sqlite?.reads.find((r) => r.name === name);
    const p = postgres?.reads.find((r) => r.name === name);
    const goal = s === undefined ? '-' : s.p95Ms < READ_GOAL_MS ? 'met' : '**not met**';
    lines.push(
      `| ${name} | ${s === undefined ? '-' : ms(s.p50Ms)} | ${s === undefined ? '-' : ms(s.p95Ms)} | ${goal} | ` +
        `${p === undefined ? '-' : ms(p.p50Ms)} | ${p === undefined ? '-' : ms(p.p95Ms)} |`,
    );
  }
  lines.push(
    '',
    `Ingest of 1 KiB JSON over HTTP, ${report.connections} connections, ${report.seconds} s per run, medians of ${report.rounds} rounds (deliveries a second acknowledged):`,
    '',
    '| store | into the full inbox | into an empty one | the build before the index, empty | full / empty | with index / without | p99 ms (full / empty / before) | search found a delivery sent after the load, s later (each run) |',
    '|---|---:|---:|---:|---|---|---|---|',
  );
  for (const store of report.stores) lines.push(ingestLine(store));
  return `${lines.join('\n')}\n`;
}
