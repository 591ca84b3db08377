import { afterEach, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { inboxProblems, listAll, missingOrChanged, sendLoad, type Acked } from '../helpers/webhook-load.js';
import { RawConnection, postHead } from '../helpers/raw-http.js';
import { API_TOKEN, ServerChildren, sleep, timedExit, withTimeout } from '../helpers/server-children.js';

/**
 * The SQLite process tests (test/process/crash.test.ts, sigterm.test.ts)
 * on PostgreSQL: a SIGKILL under concurrent load loses no delivery that was
 * answered 200, and SIGTERM answers a request whose body is still arriving,
 * commits it and exits 0. Here, run alone, because its load and its
 * timings would suffer beside the parallel suite.
 */

const run = await requirePostgres('the PostgreSQL crash and SIGTERM tests (test/serial/postgres-crash.test.ts)');
const SENDERS = 24;
const ROUNDS = 2;

const children = new ServerChildren();
const schemas: string[] = [];
afterEach(async () => {
  await children.cleanup();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

function envFor(schema: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    RECEPTION_DATABASE_URL: testDatabaseUrl(),
    RECEPTION_DATABASE_SCHEMA: schema,
    RECEPTION_DATA: children.dataDir(),
    RECEPTION_TOKEN: API_TOKEN,
    ...extra,
  };
}

function newSchema(): string {
  const schema = freshSchema();
  schemas.push(schema);
  return schema;
}

describe.runIf(run)('PostgreSQL: SIGKILL under concurrent load', () => {
  it(`loses no acknowledged delivery over ${ROUNDS} kill -9 rounds on one schema`, async () => {
    const schema = newSchema();
    const allAcked: Acked[] = [];
    const allSent = new Set<string>();
    const report: string[] = [];
    let cutInFlight = 0;

    for (let round = 1; round <= ROUNDS; round++) {
      const server = await children.start(envFor(schema));
      const killAfter = 150 + round * 100;
      let killedAt = Number.POSITIVE_INFINITY;
      let acked = 0;
      let killScheduled = false;
      const alive = (): boolean => server.child.exitCode === null && server.child.signalCode === null;
      const tally = await sendLoad({
        senders: SENDERS,
        source: 'crash',
        label: `r${round}`,
        target: () => server.url,
        running: alive,
        deadline: performance.now() + 30_000,
        onAck: () => {
          acked++;
          if (killScheduled || acked < killAfter) return;
          killScheduled = true;
          // A few ms later, so that the kill lands among bodies arriving and commits running.
          setTimeout(
            () => {
              killedAt = performance.now();
              children.signal(server, 'SIGKILL');
            },
            Math.floor(Math.random() * 15),
          );
        },
      });
      await withTimeout(server.exited, 5000, 'the killed server did not exit');
      expect(server.child.signalCode).toBe('SIGKILL');
      expect(tally.acked.length).toBeGreaterThanOrEqual(killAfter);
      allAcked.push(...tally.acked);
      for (const sent of [...tally.acked, ...tally.refused, ...tally.failed]) allSent.add(sent.marker);
      const cut = tally.failed.filter((f) => f.sentAt < killedAt).length;
      cutInFlight += cut;

      const restarted = await children.start(envFor(schema));
      const bad = await missingOrChanged(restarted.url, API_TOKEN, allAcked);
      expect(bad, `acknowledged deliveries missing or changed after round ${round}`).toEqual([]);
      const listed = await listAll(restarted.url, API_TOKEN, 'crash');
      expect(inboxProblems(listed, allSent)).toEqual([]);
      report.push(
        `round ${round}: ${tally.acked.length} acked, ${tally.failed.length} failed (${cut} in flight at the kill), ` +
          `${tally.refused.length} refused, ${listed.length - allAcked.length} unacknowledged present so far`,
      );
      children.signal(restarted, 'SIGKILL');
      await restarted.exited;
    }
    console.info(`[postgres crash] ${report.join('; ')}`);
    expect(cutInFlight).toBeGreaterThan(0);
  }, 120_000);
});

describe.runIf(run)('PostgreSQL: SIGTERM with a request in flight', () => {
  it('answers the request whose body completes after the signal, exits 0 and keeps the delivery', async () => {
    const schema = newSchema();
    const server: ServerProcess = await children.start(envFor(schema));
    const body = Buffer.from(JSON.stringify({ marker: 'drain-postgres', text: 'x'.repeat(4000) }));
    const connection = await RawConnection.open(server.url);
    const half = Math.floor(body.length / 2);
    await connection.write(postHead('/api/webhook/drain', body.length));
    await connection.write(body.subarray(0, half));
    // Give the server time to parse the head and start reading the body.
    await sleep(200);

    const signalledAt = performance.now();
    children.signal(server, 'SIGTERM');
    // It waits for the request in flight instead of exiting...
    const early = await Promise.race([server.exited.then(() => true), sleep(600).then(() => false)]);
    expect(early).toBe(false);
    // ...answers it once the body is complete, after the commit...
    await connection.write(body.subarray(half));
    const answer = await withTimeout(connection.response(), 5000, 'no answer after the body completed');
    expect(answer?.status).toBe(200);
    expect(answer?.headers.connection).toBe('close');
    const { id } = JSON.parse(answer?.body ?? '{}') as { id?: string };
    // ...and exits 0 because the work is done, not because the grace period ran out.
    const exit = await timedExit(server, 8000);
    expect(exit.code).toBe(0);
    expect(performance.now() - signalledAt).toBeLessThan(8000);
    expect(server.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true);

    const restarted = await children.start(envFor(schema));
    const raw = await fetch(`${restarted.url}/api/deliveries/${id ?? ''}/raw`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    expect(raw.status).toBe(200);
    expect(Buffer.from(await raw.arrayBuffer()).equals(body)).toBe(true);
  }, 60_000);
});
