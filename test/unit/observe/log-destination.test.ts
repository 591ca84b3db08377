import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import sonicBoom from 'sonic-boom';
import { afterEach, describe, expect, it } from 'vitest';
import { LogDestination } from '../../../src/platform/observe/log-destination.js';
import { tempDir } from '../../helpers/temp-dir.js';

const BUILT = fileURLToPath(new URL('../../../dist/src/platform/observe/log-destination.js', import.meta.url));

const dirs: Array<ReturnType<typeof tempDir>> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

/** Runs an ES module script in a fresh `node`, from the project's root. */
function runModule(script: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    encoding: 'utf8',
  });
}

function tempFile(): string {
  const dir = tempDir('reception-log-');
  dirs.push(dir);
  return join(dir.path, 'out.log');
}

/** sonic-boom, the asynchronous writer, on a real file. */
function fileTarget(file: string): sonicBoom.SonicBoom {
  return new sonicBoom.SonicBoom({ dest: file, sync: false, mkdir: true });
}

/** A file's writer that counts the chunks handed to it. */
function countingTarget(file: string): { target: sonicBoom.SonicBoom; chunks: string[] } {
  const target = fileTarget(file);
  const chunks: string[] = [];
  const write = target.write.bind(target);
  target.write = (chunk: string): boolean => {
    chunks.push(chunk);
    return write(chunk);
  };
  return { target, chunks };
}

describe('LogDestination', () => {
  it('hands the lines of one event-loop turn to the writer as one chunk, in order', async () => {
    const file = tempFile();
    const { target, chunks } = countingTarget(file);
    const destination = new LogDestination(target);
    for (let i = 0; i < 50; i++) destination.write(`{"n":${i}}\n`);
    expect(chunks).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    destination.write('{"n":50}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks).toHaveLength(2);
    await destination.end();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { n: number }).n)).toEqual(Array.from({ length: 51 }, (_, i) => i));
  });

  it('writes U+2028 and U+2029 as escapes, so that no reader splits a line on them, and the line parses the same', async () => {
    const file = tempFile();
    const destination = new LogDestination(fileTarget(file));
    const logger = pino({ base: null, timestamp: false }, destination);
    const hostile = 'a\u2028b\u2029c "\\ \u2028';
    logger.info({ source: hostile, [`key\u2029`]: 1 }, 'webhook');
    await destination.end();
    const written = readFileSync(file, 'utf8');
    expect(written).not.toMatch(/[\u2028\u2029]/);
    expect(written).toContain('a\\u2028b\\u2029c');
    expect(written.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(written)).toEqual({ level: 30, source: hostile, 'key\u2029': 1, msg: 'webhook' });
  });

  it('end() writes the lines still waiting for their turn, then closes the writer', async () => {
    const file = tempFile();
    const { target } = countingTarget(file);
    let closed = false;
    target.once('close', () => {
      closed = true;
    });
    const destination = new LogDestination(target);
    const logger = pino({ base: undefined }, destination);
    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2 }, 'last');
    await destination.end();
    expect(closed).toBe(true);
    const messages = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(['first', 'last']);
  });

  it('writes the lines still waiting when the process exits before their turn', () => {
    const file = tempFile();
    const script = `
      import sonicBoom from 'sonic-boom';
      import { LogDestination } from ${JSON.stringify(BUILT)};
      const target = new sonicBoom.SonicBoom({ dest: ${JSON.stringify(file)}, sync: false });
      await new Promise((resolve) => target.once('ready', resolve));
      const destination = new LogDestination(target);
      for (let i = 0; i < 1000; i++) destination.write(JSON.stringify({ n: i }) + '\\n');
      process.exit(3);
    `;
    const child = runModule(script);
    expect(child.stderr).toBe('');
    expect(child.status).toBe(3);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(1000);
    expect(JSON.parse(lines[999] ?? '')).toEqual({ n: 999 });
  });

  it('the process exits when a write to stdout fails at exit (EBADF here; EIO from a terminal that hung up)', () => {
    // stdout is a descriptor open for reading: every write to it fails at once.
    const file = tempFile();
    writeFileSync(file, '');
    const readOnly = openSync(file, 'r');
    const script = `
      import { LogDestination } from ${JSON.stringify(BUILT)};
      const destination = new LogDestination();
      destination.write('{"n":1}\\n');
      await new Promise((resolve) => setImmediate(resolve));
      // {"n":1} is being written; {"n":2} waits behind it, and is written synchronously at exit.
      destination.write('{"n":2}\\n');
      process.exit(3);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', readOnly, 'pipe'],
      timeout: 10_000,
    });
    closeSync(readOnly);
    expect(child.error).toBeUndefined();
    expect(child.stderr).toBe('');
    expect(child.status).toBe(3);
  });

  it('a line logged after end() reaches stdout once the writer closed, and the process exits cleanly', () => {
    // As at shutdown: a request cut off by the grace period logs its line after the writer was told to close.
    const script = `
      import { LogDestination } from ${JSON.stringify(BUILT)};
      const destination = new LogDestination();
      destination.write('{"n":1}\\n');
      const ended = destination.end();
      destination.write('{"n":2}\\n');
      await ended;
      destination.write('{"n":3}\\n');
      await new Promise((resolve) => setImmediate(resolve));
      process.exit(0);
    `;
    const child = runModule(script);
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(child.stdout).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
  });

  it('a line logged after end() to a file neither throws nor is written to a closed descriptor', async () => {
    const file = tempFile();
    const destination = new LogDestination(fileTarget(file));
    destination.write('{"n":1}\n');
    const ended = destination.end();
    destination.write('{"n":2}\n');
    await ended;
    destination.write('{"n":3}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(readFileSync(file, 'utf8')).toBe('{"n":1}\n');
  });

  it('end() resolves at once once a write has failed', async () => {
    const file = tempFile();
    const { target } = countingTarget(file);
    const destination = new LogDestination(target);
    target.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    destination.write('{"lost":true}\n');
    const started = Date.now();
    await destination.end(5000);
    expect(Date.now() - started).toBeLessThan(1000);
    target.destroy();
  });
});
