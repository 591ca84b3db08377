import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToEnd } from './child-processes.js';
import type { LoadGenerator, LoadResult, LoadRun } from './load.js';

export const AUTOCANNON_BIN = fileURLToPath(new URL('../../node_modules/.bin/autocannon', import.meta.url));

interface AutocannonJson {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: { p50: number; p99: number };
  requests: { total: number };
}

/** autocannon through its CLI, in its own process (it is JavaScript: it competes for CPU). */
export function autocannon(version: string): LoadGenerator {
  return {
    label: `${version} (CLI, separate process)`,
    notes: 'autocannon reports latency in whole milliseconds',
    async run(run: LoadRun): Promise<LoadResult> {
      const bodyFile = join(run.workDir, 'body.json');
      writeFileSync(bodyFile, run.request.body);
      const headerArgs = Object.entries(run.request.headers).flatMap(([name, value]) => ['-H', `${name}=${value}`]);
      const args = [
        '-j',
        '-n',
        '-c',
        String(run.connections),
        '-d',
        String(run.seconds),
        '-t',
        '10',
        '-m',
        'POST',
        ...headerArgs,
        '-i',
        bodyFile,
        run.url,
      ];
      const stdout = await runToEnd(AUTOCANNON_BIN, args, (run.seconds + 30) * 1000);
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line === undefined) throw new Error(`autocannon printed no result:\n${stdout}`);
      const r = JSON.parse(line) as AutocannonJson;
      return {
        seconds: r.duration,
        responses: r.requests.total,
        ok: r['2xx'],
        non2xx: r.non2xx,
        socketErrors: r.errors,
        timeouts: r.timeouts,
        requestsPerSecond: r.requests.total / r.duration,
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
      };
    },
  };
}
