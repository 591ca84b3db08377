import { afterAll, describe, expect, it } from 'vitest';
import { TransformPool } from '../../../src/transforms/transform-pool.js';
import { transformVersion } from '../../../src/transforms/transforms.js';

const pool = new TransformPool(1);
afterAll(() => pool.close());

function transform(
  code: string,
  timeoutMs = 50,
): { name: string; version: string; code: string; limits: { timeoutMs: number; memoryMb: number } } {
  return { name: 't', version: transformVersion(code), code, limits: { timeoutMs, memoryMb: 16 } };
}

describe('the transform pool: transforms run off the event loop', () => {
  it('runs a transform on a thread and answers its output', async () => {
    const run = await pool.run(transform('export default (e) => ({ body: { seen: e.id } })'), '{"id":"d1"}');
    expect(run).toMatchObject({ output: { body: { seen: 'd1' } }, logs: [] });
  });

  it('keeps the event loop turning while a transform loops until its deadline', async () => {
    const looping = pool.run(transform('export default () => { for (;;) {} }', 600), '{}');
    let ticks = 0;
    let longestGap = 0;
    let last = performance.now();
    let done = false;
    void looping.then(() => (done = true));
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
        ticks += 1;
        if (done) resolve();
        else setImmediate(tick);
      };
      setImmediate(tick);
    });
    expect(await looping).toMatchObject({ error: 'over its time limit (600 ms)' });
    // The loop ran for 600 ms on the thread; the main loop turned all along (a loop on it would be one gap of 600 ms).
    expect(ticks).toBeGreaterThan(100);
    expect(longestGap).toBeLessThan(300);
  });

  it('a queue of jobs is not a stuck thread: each waits its turn and runs to its own deadline', async () => {
    const queued = new TransformPool(1, 300);
    try {
      const looping = transform('export default () => { for (;;) {} }', 60);
      // 12 runs of 60 ms on one thread: the last answers after 720 ms or more, well past 60 + 300 ms after it was sent.
      const runs = await Promise.all(Array.from({ length: 12 }, () => queued.run(looping, '{}')));
      expect(runs.map((run) => ('error' in run ? run.error : 'output'))).toEqual(
        Array.from({ length: 12 }, () => 'over its time limit (60 ms)'),
      );
    } finally {
      await queued.close();
    }
  });

  it('answers runs of two versions side by side, each from its own context', async () => {
    const a = transform('let n = 0; export default () => ({ body: "a" + ++n })');
    const b = transform('let n = 0; export default () => ({ body: "b" + ++n })');
    const runs = await Promise.all([pool.run(a, '{}'), pool.run(b, '{}'), pool.run(a, '{}')]);
    expect(runs.map((run) => ('output' in run ? run.output?.body : run.error))).toEqual(['a1', 'b1', 'a2']);
  });
});
