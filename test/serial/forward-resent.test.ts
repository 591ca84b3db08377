import { afterEach, describe, expect, it } from 'vitest';

import { DestinationServer } from '../helpers/destination-server.js';
import { eventually } from '../helpers/eventually.js';
import { destinationsOf, loopbackDestination, untilReceived, writeConfig } from '../helpers/forwarding-process.js';
import { dropSchema, freshSchema, requirePostgres, testDatabaseUrl } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { API_TOKEN, ServerChildren, withTimeout } from '../helpers/server-children.js';
import { sendLoad } from '../helpers/webhook-load.js';

/**
 * CONTRACT 6 "After a crash" (2026-11-27): "An attempt's outcome is
 * recorded within 100 ms of the destination's answer, so a crash repeats
 * only the attempts in flight and those answered in its last 100 ms." A
 * real server forwards under load to a destination on loopback that notes
 * when it received and answered each request; it is killed with SIGKILL,
 * restarted, and every delivery arrives. A delivery the destination got
 * twice (first before the kill) was resent: there must be no more than the
 * requests in flight at the kill plus those answered in the window before
 * it. The window asserted is WINDOW_MS (the contract's 100 ms and room for
 * a loaded machine's scheduling: before the fix, outcomes waited 1.3 to
 * 3.5 s on PostgreSQL); the counts for 100 ms are printed for the issue.
 * Run alone (test/serial): the load and the timings need a quiet machine.
 */

const SOURCE = 'resent';
const SENDERS = 8;
/** Requests the destination has received when the server is killed: forwarding is in full swing. */
const KILL_AT_REQUESTS = 1500;
const WINDOW_MS = 300;
const CONTRACT_MS = 100;

const onPostgres = await requirePostgres('the forward resend test (test/serial/forward-resent.test.ts)');

const children = new ServerChildren();
let destination = new DestinationServer();
const schemas: string[] = [];
afterEach(async () => {
  await children.cleanup();
  await destination.close();
  destination = new DestinationServer();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

type Kind = 'sqlite' | 'postgres';

function startOn(kind: Kind, data: string, schema: string): Promise<ServerProcess> {
  const config = writeConfig(data, {
    destinations: { app: loopbackDestination(destination.port, { concurrency: 50, timeoutMs: 5000 }) },
    sources: { [SOURCE]: { forward: [{ to: 'app' }] } },
  });
  return children.start({
    RECEPTION_DATA: data,
    RECEPTION_TOKEN: API_TOKEN,
    RECEPTION_CONFIG: config,
    ...(kind === 'postgres'
      ? { RECEPTION_DATABASE_URL: testDatabaseUrl(), RECEPTION_DATABASE_SCHEMA: schema, RECEPTION_DATABASE_POOL: '8' }
      : {}),
  });
}

describe.each(['sqlite', 'postgres'] as const)('kill -9 under forwarding load, on %s', (kind) => {
  it.runIf(kind === 'sqlite' || onPostgres)(
    'resends only the attempts in flight and those answered just before the kill',
    async () => {
      await destination.listen();
      destination.answer = () => ({ status: 204 });
      const data = children.dataDir();
      const schema = freshSchema();
      schemas.push(schema);
      const first = await startOn(kind, data, schema);
      const alive = (): boolean => first.child.exitCode === null && first.child.signalCode === null;
      let killedAt = 0;
      const load = sendLoad({
        senders: SENDERS,
        source: SOURCE,
        label: kind,
        target: () => first.url,
        running: alive,
        deadline: performance.now() + 60_000,
      });
      await eventually(() => destination.requests.length >= KILL_AT_REQUESTS, 60_000, 'forwarding did not get under way');
      killedAt = Date.now();
      children.signal(first, 'SIGKILL');
      await withTimeout(first.exited, 5000, 'the killed server did not exit');
      const deadAt = Date.now();
      const tally = await load;
      // What the destination saw up to the kill.
      const before = destination.requests.filter((r) => r.at <= deadAt);
      const inFlight = before.filter((r) => r.answeredAt === undefined || r.answeredAt > killedAt).length;
      const answeredWithin = (ms: number): number =>
        before.filter((r) => r.answeredAt !== undefined && r.answeredAt <= killedAt && r.answeredAt > killedAt - ms).length;
      const firstSeen = new Set(before.map((r) => String(r.headers['webhook-id'])));

      const second = await startOn(kind, data, schema);
      const ids = tally.acked.map((a) => a.id);
      await untilReceived(destination, ids, 60_000);
      // Every forward settled: the attempts caught by the kill were made again.
      await eventually(
        async () => (await destinationsOf(second)).every((d) => d.pending === 0),
        60_000,
        'forwards still pending',
      );
      expect(second.child.exitCode).toBeNull();
      const after = destination.requests.filter((r) => r.at > deadAt);
      const resent = new Set(after.map((r) => String(r.headers['webhook-id'])).filter((id) => firstSeen.has(id))).size;
      console.info(
        `[forward-resent, ${kind}] ${ids.length} acknowledged, ${before.length} requests before the kill; resent after the ` +
          `restart: ${resent}; in flight at the kill: ${inFlight}; answered in the last ${CONTRACT_MS} ms: ` +
          `${answeredWithin(CONTRACT_MS)} (bound ${inFlight + answeredWithin(CONTRACT_MS)}), in the last ${WINDOW_MS} ms: ` +
          `${answeredWithin(WINDOW_MS)} (bound asserted ${inFlight + answeredWithin(WINDOW_MS)})`,
      );
      expect(resent).toBeLessThanOrEqual(inFlight + answeredWithin(WINDOW_MS));
    },
    180_000,
  );
});
