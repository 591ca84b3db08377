import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopChild } from './child-processes.js';
import { startServer } from './server-process.js';

/**
 * `npm run bench:hostile`: how much bodies that are costly to parse hold up
 * everybody else. For each shape, two senders post 4.6 to 5 MiB of it in a
 * loop while a third posts `{}` and times each answer; then one stored body
 * of that shape is read back through the API, timed. A server that parses
 * such bodies on its event loop makes every other sender wait for it.
 *
 * BENCH_SECONDS (5 per shape); BENCH_MAIN (another build's dist/src/main.js,
 * to compare two builds on the same machine).
 */

const MAIN = process.env.BENCH_MAIN ?? fileURLToPath(new URL('../src/main.js', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const TOKEN = 'hostile-bench-token-0123456789';
const LIMIT = 5 * 1024 * 1024;

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

const SHAPES: ReadonlyArray<[string, string]> = [
  ['one long string (the cheap case)', `{"a":"${'x'.repeat(LIMIT - 16)}"}`],
  ['300,000 keys', filled('{', (i) => `"k${i}":${i}`, '}')],
  ['1.7 million empty objects', filled('{"a":[', () => '{}', ']}')],
  ['2.6 million levels of nesting (refused)', `{"a":${'['.repeat(2_600_000)}${']'.repeat(2_600_000)}}`],
];

interface Timed { status: number; ms: number; id?: string }

async function post(url: string, body: string): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(`${url}/api/webhook/hostile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  const ms = performance.now() - started;
  return res.status === 200 ? { status: res.status, ms, id: (JSON.parse(text) as { id: string }).id } : { status: res.status, ms };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

async function measure(url: string, body: string): Promise<string> {
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
  const attackers = [attack(), attack()];
  const victim: number[] = [];
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) victim.push((await post(url, '{}')).ms);
  stop = true;
  await Promise.all(attackers);
  victim.sort((a, b) => a - b);
  let read = 'n/a';
  if (storedId !== undefined) {
    const started = performance.now();
    const res = await fetch(`${url}/api/deliveries/${storedId}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await res.arrayBuffer();
    read = `${(performance.now() - started).toFixed(0)} (${res.status})`;
  }
  const answered = [...statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
  return `${answered} | ${victim.length} | ${percentile(victim, 0.5).toFixed(1)} | ${percentile(victim, 0.99).toFixed(1)} | ${(victim.at(-1) ?? Number.NaN).toFixed(1)} | ${read}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'reception-hostile-'));
  const server = await startServer({
    command: process.execPath,
    args: [MAIN],
    env: { RECEPTION_PORT: '0', RECEPTION_HOST: '127.0.0.1', RECEPTION_DATA: join(dir, 'data'), RECEPTION_TOKEN: TOKEN, RECEPTION_DURABILITY: 'relaxed' },
  }, dir);
  try {
    process.stdout.write(`Hostile bodies, ${new Date().toISOString()}: ${MAIN}; ${SECONDS} s per shape, 2 senders of the shape, 1 sender of {} timed\n\n`);
    process.stdout.write('| shape | bytes | the shape\'s answers | {} answers | {} p50 ms | {} p99 ms | {} max ms | reading one back, ms |\n|---|--:|---|--:|--:|--:|--:|--:|\n');
    for (const [name, body] of SHAPES) {
      process.stderr.write(`measuring: ${name}\n`);
      process.stdout.write(`| ${name} | ${Buffer.byteLength(body)} | ${await measure(server.url, body)} |\n`);
    }
  } finally {
    await stopChild(server.child, 'SIGTERM', 15_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
