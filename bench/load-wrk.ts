import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runToEnd } from './child-processes.js';
import type { LoadGenerator, LoadResult, LoadRun } from './load.js';

/** A Lua string literal for any bytes (three-digit decimal escapes for all but plain ASCII). */
function luaString(value: string | Buffer): string {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  let out = '"';
  for (const byte of bytes) {
    const plain = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += plain ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/**
 * The request is set once (no per-request Lua, the fastest path in wrk);
 * `done` prints the summary as one JSON line. Latencies are in microseconds.
 */
function script(run: LoadRun): string {
  const headers = Object.entries(run.request.headers)
    .map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`)
    .join('\n');
  return `wrk.method = "POST"
wrk.body = ${luaString(run.request.body)}
${headers}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"responses":%.0f,"durationUs":%.0f,"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f,"p50Us":%.0f,"p99Us":%.0f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

interface WrkSummary {
  responses: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
}

export function wrk(bin: string, version: string, threads: number): LoadGenerator {
  return {
    label: `${version} (${threads} thread${threads === 1 ? '' : 's'})`,
    notes: 'wrk counts statuses >= 400 as non-2xx; 2xx = responses - that count (this route never answers 1xx/3xx)',
    async run(run: LoadRun): Promise<LoadResult> {
      const file = join(run.workDir, 'post.lua');
      writeFileSync(file, script(run));
      const args = [
        '-t',
        String(threads),
        '-c',
        String(run.connections),
        '-d',
        `${run.seconds}s`,
        '--timeout',
        '10s',
        '-s',
        file,
        run.url,
      ];
      const stdout = await runToEnd(bin, args, (run.seconds + 30) * 1000);
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`);
      const s = JSON.parse(line.slice('BENCH_RESULT '.length)) as WrkSummary;
      const seconds = s.durationUs / 1e6;
      const ok = s.responses - s.status;
      return {
        seconds,
        responses: s.responses,
        ok,
        non2xx: s.status,
        socketErrors: s.connect + s.read + s.write,
        timeouts: s.timeout,
        requestsPerSecond: s.responses / seconds,
        p50Ms: s.p50Us / 1000,
        p99Ms: s.p99Us / 1000,
      };
    },
  };
}
