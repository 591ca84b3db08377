import { describe, expect, it } from 'vitest';
import { LatestReads, type Reading } from '../../../src/config/config-reader.js';

/** SIGHUP's reads of the config file (src/server.ts): only the latest one's outcome is applied, whichever ends first. */

interface Controlled extends Reading<string> {
  resolve: (value: string) => void;
  reject: (reason: Error) => void;
  cancelled: boolean;
}

function controlled(): Controlled {
  let resolve: (value: string) => void = () => undefined;
  let reject: (reason: Error) => void = () => undefined;
  const result = new Promise<string>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  const reading: Controlled = {
    result,
    resolve,
    reject,
    cancelled: false,
    cancel: () => {
      reading.cancelled = true;
    },
  };
  return reading;
}

function harness(): { reads: LatestReads<string>; started: Controlled[]; settled: Array<PromiseSettledResult<string>> } {
  const started: Controlled[] = [];
  const settled: Array<PromiseSettledResult<string>> = [];
  const reads = new LatestReads(
    () => {
      const reading = controlled();
      started.push(reading);
      return reading;
    },
    (outcome) => settled.push(outcome),
  );
  return { reads, started, settled };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LatestReads', () => {
  it('settles a read alone with its outcome, value or error', async () => {
    const { reads, started, settled } = harness();
    expect(reads.start()).toBe(false);
    started[0]?.resolve('first');
    await flush();
    expect(reads.start()).toBe(false);
    started[1]?.reject(new Error('bad file'));
    await flush();
    expect(settled).toEqual([
      { status: 'fulfilled', value: 'first' },
      { status: 'rejected', reason: new Error('bad file') },
    ]);
  });

  it('stops the read under way when another starts, and drops its outcome even when it ends last', async () => {
    const { reads, started, settled } = harness();
    reads.start();
    expect(reads.start()).toBe(true);
    expect(started.map((reading) => reading.cancelled)).toEqual([true, false]);
    started[1]?.resolve('newer');
    await flush();
    started[0]?.resolve('older');
    await flush();
    expect(settled).toEqual([{ status: 'fulfilled', value: 'newer' }]);
  });

  it('drops a superseded read that ends first, and applies the latest when it ends', async () => {
    const { reads, started, settled } = harness();
    reads.start();
    reads.start();
    started[0]?.reject(new Error('stopped'));
    await flush();
    expect(settled).toEqual([]);
    started[1]?.resolve('newer');
    await flush();
    expect(settled).toEqual([{ status: 'fulfilled', value: 'newer' }]);
    // Nothing under way any more: the next read stops nothing.
    expect(reads.start()).toBe(false);
  });
});
