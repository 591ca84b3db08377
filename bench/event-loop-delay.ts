import { renameSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into a server under test (`node --import`, see
 * hostile-bodies.ts), apart from the server's own code, so that any build
 * can be measured: how long its event loop stood still, with
 * `perf_hooks.monitorEventLoopDelay` at 1 ms resolution. On SIGUSR2 it
 * writes what it saw since the previous SIGUSR2 to BENCH_LOOP_DELAY_FILE
 * as JSON, and starts over.
 */

export interface LoopDelayReport {
  /** Counts the reports, so that a reader can wait for the one it asked for. */
  report: number;
  maxMs: number;
  p99Ms: number;
  p50Ms: number;
}

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file !== undefined) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let report = 0;
  process.on('SIGUSR2', () => {
    report++;
    const ms = (ns: number): number => ns / 1e6;
    const written: LoopDelayReport = {
      report,
      maxMs: ms(histogram.max),
      p99Ms: ms(histogram.percentile(99)),
      p50Ms: ms(histogram.percentile(50)),
    };
    // Whole or not at all: the bench may be reading the file right now.
    writeFileSync(`${file}.tmp`, JSON.stringify(written));
    renameSync(`${file}.tmp`, file);
    histogram.reset();
  });
}
