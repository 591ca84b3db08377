import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { stopChild } from './child-processes.js';
import { largeConfigText } from './large-config.js';
import { startServer } from './server-process.js';

/**
 * `npm run bench:reload`: how long a config reload (SIGHUP) holds up the
 * server's event loop (issue 28). The config file (about 2 MB) routes a
 * source through a filter whose `$in` lists BENCH_VALUES (200,000) event
 * types, as a YAML flow list. A client asks `/healthz` again 5 ms after each
 * answer; the longest gap between two answers from the SIGHUP to the
 * `config reloaded` line (read from the server's log) is how long nothing
 * was answered. The same polling without a reload gives the machine's own
 * noise. BENCH_ROUNDS (3); BENCH_MAIN (another build's dist/src/main.js).
 */

const MAIN = process.env.BENCH_MAIN ?? fileURLToPath(new URL('../src/main.js', import.meta.url));
const VALUES = Number(process.env.BENCH_VALUES ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const POLL_PAUSE_MS = 5;
const QUIET_MS = 6000;

/**
 * When (performance.now()) the server's log first has a line with this
 * message: its stdout file read every 20 ms from where the last read ended
 * (reading it whole every time took CPU from the server measured).
 */
async function logged(file: string, message: string, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  const handle = openSync(file, 'r');
  try {
    let offset = statSync(file).size;
    let text = '';
    const chunk = Buffer.alloc(1 << 16);
    while (performance.now() < deadline) {
      for (
        let read = readSync(handle, chunk, 0, chunk.length, offset);
        read > 0;
        read = readSync(handle, chunk, 0, chunk.length, offset)
      ) {
        offset += read;
        text += chunk.subarray(0, read).toString('utf8');
      }
      if (text.includes(`"msg":"${message}`)) return performance.now();
      text = text.slice(text.lastIndexOf('\n') + 1);
      await sleep(20);
    }
  } finally {
    closeSync(handle);
  }
  throw new Error(`no "${message}" line within ${timeoutMs} ms`);
}

/** Answers of `/healthz`, each asked 5 ms after the previous one's answer, until `stop()`. */
function poll(url: string): { answers: number[]; stop: () => Promise<void> } {
  const answers: number[] = [];
  let polling = true;
  const loop = (async () => {
    while (polling) {
      try {
        await (await fetch(`${url}/healthz`)).text();
        answers.push(performance.now());
      } catch {
        // A kept-alive connection that the server closed when its loop came back: asked again.
      }
      await sleep(POLL_PAUSE_MS);
    }
  })();
  return {
    answers,
    stop: async () => {
      polling = false;
      await loop;
    },
  };
}

function longestGap(answers: readonly number[], from: number, to: number): number {
  let longest = 0;
  let previous = from;
  for (const at of answers) {
    if (at <= from) continue;
    longest = Math.max(longest, at - previous);
    previous = at;
    if (at > to) break;
  }
  return longest;
}

async function round(dir: string, configFile: string): Promise<{ reloadMs: number; gapMs: number; quietGapMs: number }> {
  const server = await startServer(
    {
      command: process.execPath,
      args: [MAIN],
      env: {
        RECEPTION_CONFIG: configFile,
        RECEPTION_DATA: join(dir, 'data'),
        RECEPTION_PORT: '0',
        RECEPTION_TOKEN: 'bench-token-0123456789',
        RECEPTION_LOG_FORMAT: 'json',
      },
    },
    dir,
    120_000,
  );
  try {
    await sleep(1000);
    const polling = poll(server.url);
    await sleep(QUIET_MS);
    const hangUp = performance.now();
    const quietGapMs = longestGap(polling.answers, hangUp - QUIET_MS + 500, hangUp);
    server.child.process.kill('SIGHUP');
    const reloaded = await logged(server.stdoutFile, 'config reload', 120_000);
    await sleep(300);
    await polling.stop();
    return { reloadMs: reloaded - hangUp, gapMs: longestGap(polling.answers, hangUp, reloaded), quietGapMs };
  } finally {
    await stopChild(server.child, 'SIGTERM', 10_000);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'reception-bench-reload-'));
try {
  const configFile = join(dir, 'reception.yaml');
  writeFileSync(configFile, largeConfigText(VALUES));
  process.stdout.write(`${MAIN}: a ${(statSync(configFile).size / 1e6).toFixed(2)} MB config, $in of ${VALUES} values\n`);
  for (let n = 1; n <= ROUNDS; n += 1) {
    const roundDir = join(dir, `round-${n}`);
    mkdirSync(roundDir);
    const { reloadMs, gapMs, quietGapMs } = await round(roundDir, configFile);
    process.stdout.write(
      `round ${n}: reloaded ${reloadMs.toFixed(0)} ms after SIGHUP; longest /healthz gap during it ${gapMs.toFixed(0)} ms ` +
        `(${quietGapMs.toFixed(0)} ms in the ${QUIET_MS / 1000 - 0.5} s before, without a reload)\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
