import { performance } from 'node:perf_hooks';
import type { InboxStore } from '../../src/deliveries/delivery-store.js';
import { benchDelivery } from './deliveries.js';

export interface FillResult {
  deliveries: number;
  /** Seconds to append them (batched, through the store). */
  appendSeconds: number;
  /** Seconds of the work behind the commits afterwards (SQLite's search index), at full speed. */
  indexSeconds: number;
}

/** The time span the deliveries are spread over: the 30 days before `now`. */
export const SPAN_MS = 30 * 24 * 3600 * 1000;

/**
 * Fills `store` with `total` deliveries of bench/size/deliveries.ts, in
 * batches through `append` (as the write queue would, without HTTP), then
 * runs the work behind the commits until it is done.
 */
export async function fill(
  store: InboxStore,
  total: number,
  now: number,
  batchSize: number,
  progress: (line: string) => void,
): Promise<FillResult> {
  const from = now - SPAN_MS;
  const started = performance.now();
  let lastReport = started;
  for (let n = 0; n < total; n += batchSize) {
    const batch = [];
    for (let i = n; i < Math.min(total, n + batchSize); i++) batch.push(benchDelivery(i, total, from, now));
    await store.append(batch);
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      const seconds = (lastReport - started) / 1000;
      progress(`${store.kind}: ${n + batch.length} of ${total} appended in ${seconds.toFixed(0)} s`);
    }
  }
  const appended = performance.now();
  let steps = 0;
  for (;;) {
    const step = await store.indexStep({ maxMs: 1000, maxRows: 2000 }, () => null);
    if (!step.more) break;
    if (++steps % 30 === 0) progress(`${store.kind}: indexing, ${((performance.now() - appended) / 1000).toFixed(0)} s so far`);
  }
  const indexed = performance.now();
  return { deliveries: total, appendSeconds: (appended - started) / 1000, indexSeconds: (indexed - appended) / 1000 };
}
