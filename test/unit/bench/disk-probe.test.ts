import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureDiskWriteRate, startDiskProbe } from '../../../bench/disk-probe.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('disk probe', () => {
  it('writes and fsyncs a 4 KiB file in turn until stopped, timing each sync', async () => {
    const dir = tempDir();
    const probe = await startDiskProbe(dir.path, 10);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const result = await probe.stop();
    expect(result.syncs).toBeGreaterThanOrEqual(3);
    expect(result.maxMs).toBeGreaterThan(0);
    expect(result.slow).toBeLessThanOrEqual(result.syncs);
    expect(readFileSync(join(dir.path, 'disk-probe')).length).toBe(4096);
    // Stopped: the loop no longer counts into the result it handed back.
    const counted = result.syncs;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(result.syncs).toBe(counted);
    dir.remove();
  });

  it('measures the rate of synced sequential writes up to its byte bound, and leaves no file', () => {
    const dir = tempDir();
    const rate = measureDiskWriteRate(dir.path, 64 * 1024, 1024 * 1024, 60);
    expect(rate.bytes).toBe(1024 * 1024);
    expect(rate.blockBytes).toBe(64 * 1024);
    expect(rate.mbPerSecond).toBeCloseTo(rate.bytes / 1e6 / rate.seconds, 6);
    expect(existsSync(join(dir.path, 'disk-write-rate'))).toBe(false);
    dir.remove();
  });
});
