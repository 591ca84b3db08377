import { request, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startChild, within, type Child } from './child-processes.js';

/**
 * Readers of `/api/stream` in a process of their own (under `nice`, so that
 * the server's CPU is what the run measures): READERS_URL, READERS_TOKEN,
 * READERS_COUNT. Each counts the delivery events it got; once all are
 * connected the process prints `{"connected":N}`; on SIGUSR2 it prints
 * `{"readers":N,"ended":E,"minEvents":…,"maxEvents":…}` (how far they got),
 * and on SIGTERM the same line, and exits.
 */

interface Reader {
  events: number;
  ended: boolean;
}

function follow(url: string, token: string, reader: Reader, connected: () => void): void {
  const req = request(`${url}/api/stream`, { headers: { authorization: `Bearer ${token}` } }, (res: IncomingMessage) => {
    if (res.statusCode !== 200) {
      process.stderr.write(`stream answered ${res.statusCode}\n`);
      process.exit(1);
    }
    connected();
    // Frames start after a blank line; "\n\nid: " counts the delivery events (the first follows the ": connected" comment).
    let tail = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const text = tail + chunk;
      let at = text.indexOf('\n\nid: ');
      while (at !== -1) {
        reader.events++;
        at = text.indexOf('\n\nid: ', at + 6);
      }
      tail = text.slice(-5);
    });
    res.on('close', () => {
      reader.ended = true;
    });
  });
  req.on('error', () => {
    reader.ended = true;
  });
  req.end();
}

function main(): void {
  const url = process.env.READERS_URL ?? '';
  const token = process.env.READERS_TOKEN ?? '';
  const count = Number(process.env.READERS_COUNT ?? '100');
  const readers: Reader[] = Array.from({ length: count }, () => ({ events: 0, ended: false }));
  let connected = 0;
  for (const reader of readers) {
    follow(url, token, reader, () => {
      connected++;
      if (connected === count) process.stdout.write(`${JSON.stringify({ connected })}\n`);
    });
  }
  const summary = (): string => {
    const events = readers.map((r) => r.events);
    return `${JSON.stringify({
      readers: count,
      ended: readers.filter((r) => r.ended).length,
      minEvents: Math.min(...events),
      maxEvents: Math.max(...events),
    })}\n`;
  };
  process.on('SIGUSR2', () => process.stdout.write(summary()));
  process.once('SIGTERM', () => {
    process.stdout.write(summary(), () => process.exit(0));
  });
}

export interface ReaderSummary {
  readers: number;
  ended: number;
  minEvents: number;
  maxEvents: number;
}

export interface RunningReaders {
  /** What the readers got so far. */
  progress(): Promise<ReaderSummary>;
  /** Stops the readers and says what they got. */
  stop(): Promise<ReaderSummary>;
}

/** Starts `count` readers of the server at `url` in their own process, and waits until all are connected. */
export async function startStreamReaders(url: string, token: string, count: number): Promise<RunningReaders> {
  const child: Child = startChild('nice', ['-n', '10', process.execPath, fileURLToPath(import.meta.url)], {
    env: { PATH: process.env.PATH ?? '', READERS_URL: url, READERS_TOKEN: token, READERS_COUNT: String(count) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let waiting: (() => void) | undefined;
  let partial = '';
  child.process.stdout?.setEncoding('utf8');
  child.process.stdout?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts.filter((line) => line.trim() !== ''));
    waiting?.();
  });
  const nextLine = (what: string): Promise<string> =>
    within(
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const line = lines.shift();
          if (line !== undefined) resolve(line);
          else waiting = check;
        };
        void child.exited.then((code) => reject(new Error(`stream readers exited (${code})`)));
        check();
      }),
      15_000,
      what,
    );
  await nextLine(`${count} stream readers connecting`);
  return {
    progress: async () => {
      child.process.kill('SIGUSR2');
      return JSON.parse(await nextLine('stream readers counting')) as ReaderSummary;
    },
    stop: async () => {
      child.process.kill('SIGTERM');
      const summary = JSON.parse(await nextLine('stream readers stopping')) as ReaderSummary;
      await child.exited;
      return summary;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
