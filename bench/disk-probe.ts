import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/** How the disk answered a probe's fsyncs during one measured run. */
export interface DiskProbeResult {
  /** fsyncs done. */
  syncs: number;
  /** The slowest, in ms. */
  maxMs: number;
  /** How many took longer than SLOW_SYNC_MS. */
  slow: number;
}

export const SLOW_SYNC_MS = 50;

export interface DiskProbe {
  /** Ends the probe after its current fsync and gives what it saw. */
  stop(): Promise<DiskProbeResult>;
}

/**
 * Writes 4 KiB to a file in `dir` and fsyncs it, one after another, every
 * `intervalMs`, while a case is measured: on a disk whose fsyncs stall now
 * and then (the EPYC machines of this project's sessions: 100 to 770 ms,
 * in phases that last minutes), a p99 is the disk's as much as the
 * server's, and the report says which rounds fell in such a phase. The
 * probe runs in the bench's own process, in libuv's thread pool, and its
 * 50 small syncs a second are little next to a store case's thousands.
 */
export async function startDiskProbe(dir: string, intervalMs = 20): Promise<DiskProbe> {
  const file = await open(join(dir, 'disk-probe'), 'w');
  const block = Buffer.alloc(4096, 0x2e);
  const result: DiskProbeResult = { syncs: 0, maxMs: 0, slow: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await file.write(block, 0, block.length, 0);
      await file.sync();
      const ms = performance.now() - started;
      result.syncs++;
      result.maxMs = Math.max(result.maxMs, ms);
      if (ms > SLOW_SYNC_MS) result.slow++;
      const rest = intervalMs - ms;
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  })();
  return {
    async stop() {
      running = false;
      try {
        await loop;
      } finally {
        await file.close();
      }
      return result;
    },
  };
}

/** The disk's rate of sequential writes, each made durable before the next (what a commit of large bodies asks of it). */
export interface DiskWriteRate {
  /** MB (10^6 bytes) per second, written and `fdatasync`ed. */
  mbPerSecond: number;
  bytes: number;
  seconds: number;
  blockBytes: number;
}

/**
 * Writes `blockBytes` at a time to a new file in `dir`, one after another,
 * each followed by `fdatasync`, until `maxBytes` are written or `maxSeconds`
 * have passed; then deletes the file. Synchronous, in the bench's own
 * process, run between cases (nothing else of the bench is running then).
 * The file is opened once and grows as it is written, as SQLite's WAL and
 * database file do.
 */
export function measureDiskWriteRate(
  dir: string,
  blockBytes = 1024 * 1024,
  maxBytes = 1024 * 1024 * 1024,
  maxSeconds = 2,
): DiskWriteRate {
  const file = join(dir, 'disk-write-rate');
  const block = Buffer.alloc(blockBytes, 0x61);
  const fd = openSync(file, 'w');
  let bytes = 0;
  const started = performance.now();
  try {
    while (bytes < maxBytes && performance.now() - started < maxSeconds * 1000) {
      writeSync(fd, block, 0, block.length, bytes);
      fdatasyncSync(fd);
      bytes += block.length;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const seconds = (performance.now() - started) / 1000;
  return { mbPerSecond: bytes / 1e6 / seconds, bytes, seconds, blockBytes };
}
