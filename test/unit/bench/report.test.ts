import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../../bench/load.js';
import { markdown, type CaseResult, type RunReport } from '../../../bench/report.js';
import { combineRounds } from '../../../bench/rounds.js';

function load(ok: number): LoadResult {
  return {
    seconds: 10,
    responses: ok,
    ok,
    non2xx: 0,
    socketErrors: 0,
    timeouts: 0,
    requestsPerSecond: ok / 10,
    p50Ms: 1,
    p99Ms: 3,
  };
}

function report(cases: CaseResult[]): RunReport {
  return {
    meta: {
      date: 'd',
      node: 'v20',
      sqliteDriver: 's',
      cpu: 'c',
      loadAverageAtStart: [0, 0, 0],
      loadGenerator: 'wrk',
      loadGeneratorNotes: 'n',
      connections: 50,
      seconds: 10,
      warmupSeconds: 2,
      rounds: 2,
      bodyBytes: 1024,
      receptionLogs: 'l',
      profiled: false,
    },
    cases,
    problems: [],
  };
}

describe('markdown: server CPU per delivery', () => {
  it("gives each round's CPU per 2xx, and with stream readers what they had at the load's end and the CPU until they had all", () => {
    // 50 % of a core for 10 s over 10,000 answers: 500 µs each.
    const plain = combineRounds([
      { name: 'ref', description: 'd', ok: true, storeCheck: 'n/a', load: load(10_000), serverCpuPercent: 50 },
      { name: 'ref', description: 'd', ok: true, storeCheck: 'n/a', load: load(20_000), serverCpuPercent: 50 },
    ]);
    const readers = combineRounds([
      {
        name: 'ref, 100 stream readers',
        description: 'd',
        ok: true,
        storeCheck: 'n/a',
        load: load(10_000),
        serverCpuPercent: 80,
        readers: { expected: 12_000, atLoadEnd: 300, caughtUp: true, drainSeconds: 4.25, cpuUsPerDeliveryWithDrain: 950 },
      },
      {
        name: 'ref, 100 stream readers',
        description: 'd',
        ok: true,
        storeCheck: 'n/a',
        load: load(10_000),
        serverCpuPercent: 80,
        readers: { expected: 12_100, atLoadEnd: 12_000, caughtUp: false, drainSeconds: 60, cpuUsPerDeliveryWithDrain: 810 },
      },
    ]);
    const text = markdown(report([plain, readers]));
    expect(text).toContain('- ref: 500.0 / 250.0\n');
    expect(text).toContain(
      "- ref, 100 stream readers: 800.0 / 800.0; with readers caught up: 950.0 / 810.0; slowest reader at the load's end: 300 of 12000, 12000 of 12100, all 4.3 s later, **never all**\n",
    );
  });
});
