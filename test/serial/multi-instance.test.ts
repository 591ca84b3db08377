import { writeFileSync } from 'node:fs';

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freshSchema } from '../helpers/postgres.js';

import { requirePrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres-control.js';

import { ResumingSseClient, streamProblems } from '../helpers/resuming-sse.js';

import type { ServerProcess } from '../helpers/server-process.js';
import {
  inboxProblems,
  listAll,
  missingOrChanged,
  postWebhook,
  sendLoad,
  sleepMs,
  type Failed,
  type Refused,
} from '../helpers/webhook-load.js';

import { API_TOKEN, ServerChildren, withTimeout } from '../helpers/server-children.js';

import { eventually } from '../helpers/eventually.js';

/**
 * Issue 5, the proof: three instances share one PostgreSQL inbox. Concurrent
 * senders spread over the three; one instance is SIGKILLed mid-way and
 * PostgreSQL is stopped and started again mid-way. Then every delivery
 * answered 200 is in the inbox, and a stream client on each surviving
 * instance (reconnecting with Last-Event-ID, as EventSource does) saw every
 * delivery of the inbox exactly once, in seq order. While PostgreSQL was
 * down, receiving answered 503 storage_unavailable and never 200, and
 * /readyz answered 503; afterwards both recovered without a restart.
 */

const SUITE = 'the multi-instance test (test/serial/multi-instance.test.ts)';
const run = requirePrivatePostgres(SUITE);
/** The suite's own PostgreSQL server: the machine's shared one is never stopped. */
let control: PrivatePostgres | undefined;

const SENDERS = 12;
const KILL_AFTER = 150;
const PG_STOP_AFTER = 300;
const TARGET_ACKED = 600;
/** How long PostgreSQL stays down once the survivors report it. */
const PG_DOWN_MS = 2000;
const auth = { authorization: `Bearer ${API_TOKEN}` };

/** The status of a GET, or the connection error's code. */
async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number | string> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause;
    return typeof cause?.code === 'string' ? cause.code : String(error);
  }
}

/** Polls until `url` answers `status`; resolves with the ms it took. */
async function untilStatus(url: string, status: number, ms: number): Promise<number> {
  const started = performance.now();
  let last: number | string = 'none';
  while (performance.now() - started < ms) {
    last = await statusOf(url);
    if (last === status) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer ${status} within ${ms} ms (last: ${last})`);
}

describe.runIf(run)('three instances on one PostgreSQL inbox', () => {
  const children = new ServerChildren();
  const schema = freshSchema();
  let instances: ServerProcess[] = [];

  beforeAll(async () => {
    control = await startPrivatePostgres();
    const databaseUrl = control.url;
    const configDir = children.dataDir();
    const configFile = join(configDir, 'reception.yaml');
    writeFileSync(configFile, 'sources:\n  orders:\n    dedup:\n      header: X-Request-Id\n');
    // Started at the same moment: the migrations run once, under their advisory lock.
    instances = await Promise.all(
      [0, 1, 2].map(() =>
        children.start({
          RECEPTION_DATABASE_URL: databaseUrl,
          RECEPTION_DATABASE_SCHEMA: schema,
          RECEPTION_DATABASE_POOL: '4',
          RECEPTION_DATA: children.dataDir(),
          RECEPTION_TOKEN: API_TOKEN,
          RECEPTION_CONFIG: configFile,
        }),
      ),
    );
  }, 60_000);

  afterAll(async () => {
    await children.cleanup();
    await control?.destroy();
  }, 90_000);

  it('stores one row for an X-Request-Id sent to all three at once, and answers each with its id', async () => {
    const requestIds = Array.from({ length: 8 }, (_, i) => `order-${i}-${schema}`);
    const answers = await Promise.all(
      requestIds.map(async (requestId, i) => {
        const body = Buffer.from(JSON.stringify({ order: i }));
        // The same request, at once, to every instance (a sender retrying through a load balancer).
        return Promise.all(
          instances.map((instance) => postWebhook(instance.url, 'orders', body, { headers: { 'x-request-id': requestId } })),
        );
      }),
    );
    for (const group of answers) {
      expect(group.map((answer) => answer.status)).toEqual([200, 200, 200]);
      const parsed = group.map((answer) => JSON.parse(answer.text) as { id: string; receivedAt: string; duplicate?: boolean });
      expect(new Set(parsed.map((p) => p.id)).size).toBe(1);
      expect(new Set(parsed.map((p) => p.receivedAt)).size).toBe(1);
      expect(parsed.filter((p) => p.duplicate !== true)).toHaveLength(1);
    }
    const [first] = instances;
    const stored = await listAll(first?.url ?? '', API_TOKEN, 'orders');
    expect(stored).toHaveLength(requestIds.length);
    expect(new Set(stored.map((d) => d.id))).toEqual(
      new Set(answers.map((group) => (JSON.parse(group[0]?.text ?? '{}') as { id: string }).id)),
    );
  });

  it('loses no 200 and streams every delivery once, in order, through a SIGKILL and a PostgreSQL restart', async () => {
    if (control === undefined) throw new Error('unreachable: beforeAll starts the server');
    const [a, b, c] = instances;
    if (a === undefined || b === undefined || c === undefined) throw new Error('three instances expected');
    const survivors = [a, b];
    const clients = instances.map((instance) => new ResumingSseClient(instance.url, API_TOKEN, { after: 0 }));
    const [clientA, clientB, clientC] = clients;
    await eventually(() => clients.every((client) => client.connections > 0), 15_000, 'a stream client did not connect');

    const alive = new Set(instances);
    const timeline: string[] = [];
    const t0 = performance.now();
    const mark = (what: string): number => {
      const at = performance.now();
      timeline.push(`${((at - t0) / 1000).toFixed(1)}s ${what}`);
      return at;
    };
    let acked = 0;
    let recoveredAt = Number.POSITIVE_INFINITY;
    const ackedSinceRecovery = new Map<string, number>();
    let stopped = false;
    const refusals: Refused[] = [];
    const failures: Failed[] = [];
    const load = sendLoad({
      senders: SENDERS,
      source: 'load',
      label: 'multi',
      target: (senderId, n) => {
        const live = instances.filter((instance) => alive.has(instance));
        return live[(senderId + n) % live.length]?.url;
      },
      running: () => !stopped,
      deadline: performance.now() + 120_000,
      pauseAfterFailureMs: 100,
      onAck: (delivery) => {
        acked++;
        if (delivery.sentAt > recoveredAt)
          ackedSinceRecovery.set(delivery.target, (ackedSinceRecovery.get(delivery.target) ?? 0) + 1);
      },
      onRefused: (refused) => {
        refusals.push(refused);
      },
      onFailed: (failed) => {
        failures.push(failed);
      },
    });

    let downFrom = Number.POSITIVE_INFINITY;
    let downTo = Number.POSITIVE_INFINITY;
    let readsWhileDown: Array<number | string> = [];
    let recoveredInMs = 0;
    try {
      await eventually(() => acked >= KILL_AFTER, 60_000, `only ${acked} acknowledged before the kill`);
      alive.delete(c);
      mark(`SIGKILL instance 3 at ${acked} acknowledged`);
      children.signal(c, 'SIGKILL');
      await withTimeout(c.exited, 5000, 'the killed instance did not exit');
      await clientC?.stop();

      await eventually(() => acked >= PG_STOP_AFTER, 60_000, `only ${acked} acknowledged before the PostgreSQL restart`);
      mark(`stopping PostgreSQL at ${acked} acknowledged`);
      await control.stop();
      downFrom = mark('PostgreSQL stopped');
      for (const instance of survivors) await untilStatus(`${instance.url}/readyz`, 503, 15_000);
      mark('/readyz answers 503 on both survivors');
      await eventually(
        () => refusals.some((r) => r.sentAt > downFrom && r.status === 503),
        15_000,
        'no webhook was refused while PostgreSQL was down',
      );
      readsWhileDown = await Promise.all(survivors.map((instance) => statusOf(`${instance.url}/api/deliveries?limit=1`, auth)));
      mark('a webhook was answered 503 while PostgreSQL was down');
      // Down for a while longer: senders keep trying (and must keep being refused), stream clients keep reconnecting.
      await sleepMs(PG_DOWN_MS);
      downTo = mark('starting PostgreSQL');
      await control.start();
      mark('PostgreSQL answers again');
      const recovering = performance.now();
      for (const instance of survivors) await untilStatus(`${instance.url}/readyz`, 200, 30_000);
      recoveredInMs = performance.now() - recovering;
      mark(`/readyz answers 200 on both survivors at ${acked} acknowledged`);
      recoveredAt = performance.now();
      // Each survivor must take deliveries again by itself, not only answer /readyz.
      const recoveredEnough = (): boolean =>
        acked >= TARGET_ACKED && survivors.every((instance) => (ackedSinceRecovery.get(instance.url) ?? 0) >= 25);
      for (const deadline = performance.now() + 60_000; !recoveredEnough();) {
        if (performance.now() > deadline) {
          const port = (url: string): string => new URL(url).port;
          const refusedSince = refusals
            .filter((r) => r.sentAt > recoveredAt)
            .map((r) => `${port(r.target)} ${r.status} ${r.code ?? ''}`);
          const failedSince = failures.filter((f) => f.sentAt > recoveredAt).map((f) => `${port(f.target)} ${f.error}`);
          throw new Error(
            `after the recovery: ${acked} acknowledged in all, by survivor ${JSON.stringify(Object.fromEntries(ackedSinceRecovery))}; ` +
              `refused since: ${refusedSince.slice(-20).join(', ')}; failed since: ${failedSince.slice(-20).join(', ')}; ` +
              `logs: ${survivors
                .map((instance) =>
                  instance.logs
                    .filter((line) => !line.includes('"status":200'))
                    .slice(-5)
                    .join('\n'),
                )
                .join('\n')}`,
          );
        }
        await sleepMs(20);
      }
      mark(`stopping the load at ${acked} acknowledged`);
    } finally {
      stopped = true;
    }
    const tally = await load;

    // While PostgreSQL was down: never 200; refusals are 503 storage_unavailable with Retry-After.
    const during = (sent: { sentAt: number }, answeredAt: number): boolean => sent.sentAt > downFrom && answeredAt < downTo;
    expect(tally.acked.filter((x) => during(x, x.answeredAt))).toEqual([]);
    const refusedDuring = tally.refused.filter((x) => during(x, x.answeredAt));
    expect(refusedDuring.length).toBeGreaterThan(0);
    expect(
      refusedDuring.filter((x) => x.status !== 503 || x.code !== 'storage_unavailable' || x.retryAfter === undefined),
    ).toEqual([]);
    expect(readsWhileDown).toEqual([503, 503]);
    // After the restart both survivors took deliveries again, by themselves.
    for (const instance of survivors) expect(ackedSinceRecovery.get(instance.url) ?? 0).toBeGreaterThanOrEqual(25);

    // The LISTEN connections came back as well: with the load stopped, a delivery to one survivor
    // reaches the stream on the other only through the notification.
    for (const instance of survivors) {
      // It retries with a backoff of up to 5 s, so it may come back a little after the pool did.
      await eventually(
        () => instance.logs.some((line) => line.includes('commit feed reconnected')),
        15_000,
        `${instance.url} did not log "commit feed reconnected to PostgreSQL"`,
      );
    }
    for (const [to, watcher] of [
      [a, clientB],
      [b, clientA],
    ] as const) {
      const answer = await postWebhook(to.url, 'after-restart', Buffer.from('{"wake":"the other instance"}'));
      expect(answer.status).toBe(200);
      const { id } = JSON.parse(answer.text) as { id: string };
      const { seq } = (await (await fetch(`${to.url}/api/deliveries/${id}`, { headers: auth })).json()) as { seq: number };
      await watcher?.waitForSeq(seq, 10_000);
    }

    // Every 200 is in the inbox with its exact bytes, and nothing is there that was not sent, or twice.
    const missing = await missingOrChanged(a.url, API_TOKEN, tally.acked);
    expect(missing, 'acknowledged deliveries missing or changed').toEqual([]);
    const inbox = await listAll(b.url, API_TOKEN);
    const sentMarkers = new Set([...tally.acked, ...tally.refused, ...tally.failed].map((sent) => sent.marker));
    expect(
      inboxProblems(
        inbox.filter((d) => d.source === 'load'),
        sentMarkers,
      ),
    ).toEqual([]);

    // Each stream client saw the whole inbox, once each, in seq order (the killed one: a prefix of it).
    const inboxSeqs = inbox.map((d) => d.seq).sort((x, y) => x - y);
    const lastSeq = inboxSeqs.at(-1) ?? 0;
    for (const client of [clientA, clientB]) await client?.waitForSeq(lastSeq, 30_000);
    for (const client of clients) await client.stop();
    expect(streamProblems(clientA?.received ?? [], inboxSeqs)).toEqual([]);
    expect(streamProblems(clientB?.received ?? [], inboxSeqs)).toEqual([]);
    const cLast = clientC?.lastSeq ?? 0;
    expect(
      streamProblems(
        clientC?.received ?? [],
        inboxSeqs.filter((seq) => seq <= cLast),
      ),
    ).toEqual([]);
    const byId = new Map(inbox.map((d) => [d.seq, d.id]));
    expect(clientA?.received.filter((d) => byId.get(d.seq) !== d.id)).toEqual([]);

    const cut = tally.failed.filter((x) => x.target === c.url).length;
    console.info(
      `[multi-instance] ${tally.acked.length} acked (${inbox.length} in the inbox), ` +
        `${tally.refused.length} refused (${refusedDuring.length} 503 while PostgreSQL was down), ` +
        `${tally.failed.length} without an answer (${cut} to the killed instance); ` +
        `reads while down: ${readsWhileDown.join(', ')}; survivors ready ${Math.round(recoveredInMs)} ms after PostgreSQL was; ` +
        `stream connections: ${clients.map((client) => `${client.connections} (failed: ${JSON.stringify(Object.fromEntries(client.failedAttempts))})`).join(', ')}; ` +
        `timeline: ${timeline.join('; ')}`,
    );
  }, 240_000);
});
