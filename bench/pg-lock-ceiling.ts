import pg from 'pg';
import { PostgresStore } from '../src/inbox/postgres-store.js';
import { BENCH_DATABASE_URL } from './postgres-schema.js';
import { jsonBody } from './load.js';
import { storeDelivery } from './store-delivery.js';

/**
 * `node dist/bench/pg-lock-ceiling.js`: how many deliveries a second the
 * PostgreSQL inbox can take from all instances together, the append lock
 * being held by one batch at a time (docs/scaling.md). Stores in a fresh
 * schema, from this process, with no HTTP in front: N "instances" (each a
 * PostgresStore with its own pool) append batches of B 1 KiB deliveries
 * back to back for a few seconds; reported: deliveries/s in all, and the
 * time per batch seen by an appender (the lock's hold time and one round
 * trip). BENCH_PG_BATCHES ("25,100,500"), BENCH_PG_INSTANCES ("1,2,4"),
 * BENCH_PG_SECONDS (4).
 */

const batches = (process.env.BENCH_PG_BATCHES ?? '25,100,500').split(',').map(Number);
const instanceCounts = (process.env.BENCH_PG_INSTANCES ?? '1,2,4').split(',').map(Number);
const seconds = Number(process.env.BENCH_PG_SECONDS ?? '4');
const schema = `bench_ceiling_${process.pid}`;
const body = jsonBody(1024);

async function run(instances: number, batch: number): Promise<string> {
  const stores = await Promise.all(
    Array.from({ length: instances }, () => PostgresStore.open({ connectionString: BENCH_DATABASE_URL, schema, poolSize: 2 })),
  );
  const until = performance.now() + seconds * 1000;
  let stored = 0;
  let batchesDone = 0;
  let batchMs = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    stores.map(async (store) => {
      while (performance.now() < until) {
        const items = Array.from({ length: batch }, () => storeDelivery(body));
        const t = performance.now();
        await store.append(items);
        batchMs += performance.now() - t;
        batchesDone++;
        stored += batch;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await Promise.all(stores.map((store) => store.close()));
  return `| ${instances} | ${batch} | ${Math.round(stored / wall).toLocaleString('en')} | ${(batchMs / batchesDone).toFixed(2)} | ${(((used.user + used.system) / stored) * 1).toFixed(1)} |`;
}

async function main(): Promise<void> {
  const lines = [
    '| appenders | batch | deliveries/s in all | ms per batch, each appender | client CPU µs per delivery |',
    '|--:|--:|--:|--:|--:|',
  ];
  try {
    for (const batch of batches) for (const instances of instanceCounts) lines.push(await run(instances, batch));
  } finally {
    const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`pg-lock-ceiling failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
