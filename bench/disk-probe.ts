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
