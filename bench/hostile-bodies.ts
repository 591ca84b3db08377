import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { stopChild, type Child } from './child-processes.js';
import type { LoopDelayReport } from './event-loop-delay.js';
import { startServer } from './server-process.js';

/**
 * `npm run bench:hostile`: how much bodies that are costly to parse hold up
 * everybody else. For each shape, two senders post 4.6 to 5 MiB of it in a
 * loop while a third posts `{}` and times each answer; then one stored body
 * of that shape is read back through the API, timed. A server that parses
 * such bodies on its event loop makes every other sender wait for it. The
 * last row is a flood: FLOOD_SENDERS senders of the cheap shape at once,
 * which a group commit without a byte bound stored in one transaction. For
 * every row, the server's event loop delay (`event-loop-delay.ts`,
 * preloaded into the server): the longest stall and the 99th percentile.
 *
 * BENCH_SECONDS (5 per shape); BENCH_MAIN (another build's dist/src/main.js,
 * to compare two builds on the same machine); BENCH_DURABILITY (`relaxed`);
 * BENCH_SHAPES (only the shapes whose name contains one of these
 * comma-separated words, e.g. `flood`).
 */

const MAIN = process.env.BENCH_MAIN ?? fileURLToPath(new URL('../src/main.js', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const TOKEN = 'hostile-bench-token-0123456789';
const LIMIT = 5 * 1024 * 1024;
const FLOOD_SENDERS = 32;
const PROBE = fileURLToPath(new URL('./event-loop-delay.js', import.meta.url));

/** Repeats `part(i)` joined by commas inside `open`/`close` up to just under the body limit. */
function filled(open: string, part: (i: number) => string, close: string): string {
  const parts: string[] = [];
  let length = open.length + close.length;
  for (let i = 0; ; i++) {
    const next = part(i);
    if (length + next.length + 1 > LIMIT - 16) break;
    parts.push(next);
    length += next.length + 1;
  }
  return `${open}${parts.join(',')}${close}`;
}

const LONG_STRING = `{"a":"${'x'.repeat(LIMIT - 16)}"}`;

/** Each shape: its name, the body, and how many senders post it at once. */
const SHAPES: ReadonlyArray<[string, string, number]> = [
  ['one long string (the cheap case)', LONG_STRING, 2],
  ['300,000 keys', filled('{', (i) => `"k${i}":${i}`, '}'), 2],
  ['1.7 million empty objects', filled('{"a":[', () => '{}', ']}'), 2],
  ['2.6 million levels of nesting (refused)', `{"a":${'['.repeat(2_600_000)}${']'.repeat(2_600_000)}}`, 2],
  [`flood: one long string from ${FLOOD_SENDERS} senders at once`, LONG_STRING, FLOOD_SENDERS],
];

interface Timed {
  status: number;
  ms: number;
  id?: string;
}

async function post(url: string, body: string | Buffer): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(`${url}/api/webhook/hostile`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  const ms = performance.now() - started;
  return res.status === 200
    ? { status: res.status, ms, id: (JSON.parse(text) as { id: string }).id }
    : { status: res.status, ms };
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

/** Asks the server's preloaded probe for its event loop delay since the last ask (see event-loop-delay.ts). */
async function loopDelay(child: Child, file: string, report: number): Promise<LoopDelayReport> {
  child.process.kill('SIGUSR2');
  for (;;) {
    if (existsSync(file)) {
      const written = JSON.parse(readFileSync(file, 'utf8')) as LoopDelayReport;
      if (written.report === report) return written;
    }
    await sleep(20);
  }
}

async function measure(url: string, text: string, senders: number, delay: () => Promise<LoopDelayReport>): Promise<string> {
  const body = Buffer.from(text);
  await delay();
  let stop = false;
  const statuses = new Map<number, number>();
  let storedId: string | undefined;
  const attack = async (): Promise<void> => {
    while (!stop) {
      const answer = await post(url, body);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      storedId ??= answer.id;
    }
  };
  const attackers = Array.from({ length: senders }, () => attack());
  const victim: number[] = [];
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) victim.push((await post(url, '{}')).ms);
  stop = true;
  await Promise.all(attackers);
  const stalls = await delay();
  victim.sort((a, b) => a - b);
  let read = 'n/a';
  if (storedId !== undefined) {
    const started = performance.now();
    const res = await fetch(`${url}/api/deliveries/${storedId}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await res.arrayBuffer();
    read = `${(performance.now() - started).toFixed(0)} (${res.status})`;
  }
  const answered = [...statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
  return (
    `${answered} | ${victim.length} | ${percentile(victim, 0.5).toFixed(1)} | ${percentile(victim, 0.99).toFixed(1)} | ${(victim.at(-1) ?? Number.NaN).toFixed(1)} ` +
    `| ${stalls.maxMs.toFixed(0)} | ${stalls.p99Ms.toFixed(0)} | ${read}`
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'reception-hostile-'));
  const delayFile = join(dir, 'loop-delay.json');
  const durability = process.env.BENCH_DURABILITY ?? 'relaxed';
  const server = await startServer(
    {
      command: process.execPath,
      args: ['--import', PROBE, MAIN],
      env: {
        RECEPTION_PORT: '0',
        RECEPTION_HOST: '127.0.0.1',
        RECEPTION_DATA: join(dir, 'data'),
        RECEPTION_TOKEN: TOKEN,
        RECEPTION_DURABILITY: durability,
        BENCH_LOOP_DELAY_FILE: delayFile,
      },
    },
    dir,
  );
  let reports = 0;
  const delay = (): Promise<LoopDelayReport> => loopDelay(server.child, delayFile, ++reports);
  try {
    process.stdout.write(
      `Hostile bodies, ${new Date().toISOString()}: ${MAIN}; ${durability}; ${SECONDS} s per shape, the shape's senders, 1 sender of {} timed\n\n`,
    );
    process.stdout.write(
      "| shape | bytes | the shape's answers | {} answers | {} p50 ms | {} p99 ms | {} max ms " +
        '| loop stall max ms | loop delay p99 ms | reading one back, ms |\n|---|--:|---|--:|--:|--:|--:|--:|--:|--:|\n',
    );
    const only = process.env.BENCH_SHAPES?.split(',')
      .map((word) => word.trim())
      .filter((word) => word !== '');
    for (const [name, body, senders] of SHAPES) {
      if (only !== undefined && !only.some((word) => name.includes(word))) continue;
      process.stderr.write(`measuring: ${name}\n`);
      process.stdout.write(`| ${name} | ${Buffer.byteLength(body)} | ${await measure(server.url, body, senders, delay)} |\n`);
    }
  } finally {
    await stopChild(server.child, 'SIGTERM', 15_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
