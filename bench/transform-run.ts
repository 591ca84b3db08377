import { prepareTransformEngine } from '../src/transforms/quickjs-engine.js';
import { Sandbox } from '../src/transforms/sandbox.js';
import { TransformPool } from '../src/transforms/transform-pool.js';
import { transformVersion } from '../src/transforms/transforms.js';

/**
 * What one run of a small transform costs (docs/decisions/transform-sandbox.md):
 * in the sandbox itself, with its context reused, and through the pool (the
 * round trip to a thread and back). `npm run bench:transform`.
 */
const CODE = `export default function (event) {
  if (event.eventType === 'invoice.draft') return null;
  return { body: { text: event.eventType + ' ' + event.body.id, amount: event.body.amount }, headers: { 'x-kind': 'invoice' } };
}`;
const EVENT = JSON.stringify({
  id: '01936f0e-5d1c-7b3a-9f0e-2a4c6e8b0d1f',
  seq: 42,
  source: 'stripe',
  eventType: 'invoice.paid',
  receivedAt: new Date().toISOString(),
  headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=abc' },
  query: {},
  body: { id: 'in_1', amount: 1200, currency: 'eur', lines: [{ id: 'il_1', amount: 1200 }] },
  rawBody: '{"id":"in_1"}',
});
const RUNS = Number(process.env.RUNS ?? 5000);

function percentiles(micros: number[]): string {
  const sorted = [...micros].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return `p50 ${at(0.5).toFixed(0)} µs, p99 ${at(0.99).toFixed(0)} µs (${sorted.length} runs)`;
}

await prepareTransformEngine();
const sandbox = Sandbox.compile('bench', CODE);
const inThread: number[] = [];
for (let i = 0; i < RUNS + 500; i++) {
  const started = performance.now();
  const run = sandbox.run(EVENT);
  if (i >= 500) inThread.push((performance.now() - started) * 1000);
  if ('error' in run) throw new Error(run.error);
}
sandbox.dispose();
console.log(`in the sandbox, context reused: ${percentiles(inThread)}`);

const pool = new TransformPool(1);
const transform = { name: 'bench', version: transformVersion(CODE), code: CODE, limits: { timeoutMs: 50, memoryMb: 16 } };
const viaPool: number[] = [];
for (let i = 0; i < RUNS + 500; i++) {
  const started = performance.now();
  const run = await pool.run(transform, EVENT);
  if (i >= 500) viaPool.push((performance.now() - started) * 1000);
  if ('error' in run) throw new Error(run.error);
}
console.log(`through the pool (one thread, one run at a time): ${percentiles(viaPool)}`);
await pool.close();
