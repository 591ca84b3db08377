import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../helpers/server-process.js';
import { listAll, markedBody, missingOrChanged } from '../helpers/webhook-load.js';
import { API_TOKEN, ServerChildren, withTimeout } from '../helpers/server-children.js';

/**
 * CONTRACT 1: "200 is sent only after the delivery is committed ... an
 * acknowledged delivery is never lost, not even by kill -9". Concurrent
 * senders hit a real server process, which is SIGKILLed mid-load; after a
 * restart on the same data directory every delivery that was answered 200
 * must be readable with its exact bytes. Several rounds on one directory.
 */

const SENDERS = 32;
const ROUNDS = 3;
const SOURCE = 'crash';

interface Sent {
  marker: string;
  raw: Buffer;
}
interface Acked extends Sent {
  id: string;
}
interface RoundResult {
  acked: Acked[];
  /** Requests that failed or were cut by the kill: they may or may not be stored. */
  unanswered: Sent[];
  /** Of the unanswered, those sent before the SIGKILL: the kill cut them mid-flight. */
  cutInFlight: number;
  /** Answers other than 200 (a 503 would be legitimate under overload). */
  refused: number;
}

const children = new ServerChildren();
afterEach(async () => {
  await children.cleanup();
});

function post(agent: Agent, url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/webhook/${SOURCE}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends from `SENDERS` loops until `killAfter` deliveries were acknowledged, then SIGKILLs the server. */
async function loadAndKill(server: ServerProcess, round: number, killAfter: number): Promise<RoundResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
  const result: RoundResult = { acked: [], unanswered: [], cutInFlight: 0, refused: 0 };
  let killScheduled = false;
  let killedAt = Number.POSITIVE_INFINITY;
  let counter = 0;
  const alive = (): boolean => server.child.exitCode === null && server.child.signalCode === null;
  const deadline = performance.now() + 15_000;
  const sender = async (senderId: number): Promise<void> => {
    while (alive() && performance.now() < deadline) {
      const n = counter++;
      const marker = `r${round}-s${senderId}-n${n}-${randomBytes(6).toString('hex')}`;
      const raw = markedBody(marker, n);
      const sentAt = performance.now();
      try {
        const answer = await post(agent, server.url, raw);
        if (answer.status !== 200) {
          result.refused += 1;
          continue;
        }
        const { id } = JSON.parse(answer.text) as { id: string };
        result.acked.push({ id, marker, raw });
        if (!killScheduled && result.acked.length >= killAfter) {
          killScheduled = true;
          // A few ms later, so that the kill lands among bodies arriving and commits running.
          setTimeout(
            () => {
              killedAt = performance.now();
              children.signal(server, 'SIGKILL');
            },
            Math.floor(Math.random() * 15),
          );
        }
      } catch {
        result.unanswered.push({ marker, raw });
        if (sentAt < killedAt) result.cutInFlight += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, (_, i) => sender(i)));
  agent.destroy();
  await withTimeout(server.exited, 5000, 'the killed server did not exit');
  return result;
}

describe('SIGKILL under concurrent load', () => {
  it(`loses no acknowledged delivery over ${ROUNDS} kill -9 rounds on one data directory`, async () => {
    const data = children.dataDir();
    const env = { RECEPTION_DATA: data, RECEPTION_TOKEN: API_TOKEN };
    const allAcked: Acked[] = [];
    const allSent = new Map<string, Sent>();
    const report: string[] = [];
    let cutInFlight = 0;
    // Each restart first checks everything acknowledged so far, then takes the
    // next round's load. Round 2 runs with RECEPTION_DURABILITY=relaxed, which
    // must survive kill -9 as well (only power loss may cost it commits).
    const envFor = (round: number): Record<string, string> => ({
      ...env,
      RECEPTION_DURABILITY: round === 2 ? 'relaxed' : 'full',
    });
    let server = await children.start(envFor(1));
    for (let round = 1; round <= ROUNDS; round++) {
      const started = performance.now();
      const killAfter = 200 + round * 100;
      const result = await loadAndKill(server, round, killAfter);
      expect(server.child.signalCode).toBe('SIGKILL');
      expect(result.acked.length).toBeGreaterThanOrEqual(killAfter);
      allAcked.push(...result.acked);
      cutInFlight += result.cutInFlight;
      for (const sent of [...result.acked, ...result.unanswered]) allSent.set(sent.marker, sent);

      server = await children.start(envFor(round + 1));
      // This round's deliveries byte for byte (after the last round: all of them)...
      const bad = await missingOrChanged(server.url, API_TOKEN, round === ROUNDS ? allAcked : result.acked);
      expect(bad, `acknowledged deliveries missing or changed after round ${round}`).toEqual([]);

      // ...and every earlier one still listed with its marker. Whatever else
      // is in the inbox must be a request that was actually sent (an
      // unanswered one), stored once.
      const listed = await listAll(server.url, API_TOKEN, SOURCE);
      const markerById = new Map(listed.map((item) => [item.id, String(item.body.marker)]));
      expect(allAcked.filter((a) => markerById.get(a.id) !== a.marker).map((a) => a.id)).toEqual([]);
      const markers = [...markerById.values()];
      expect(markerById.size).toBe(listed.length);
      expect(new Set(markers).size).toBe(markers.length);
      expect(markers.filter((marker) => !allSent.has(marker))).toEqual([]);
      const unackedPresent = listed.length - allAcked.length;

      report.push(
        `round ${round} (${envFor(round).RECEPTION_DURABILITY}): ${result.acked.length} acked, ${result.unanswered.length} failed ` +
          `(${result.cutInFlight} in flight at the kill)` +
          `, ${unackedPresent} unacknowledged present so far, ${result.refused} refused, ` +
          `${Math.round(performance.now() - started)} ms`,
      );
    }
    console.info(`[crash] ${report.join('; ')}`);
    // The kill landed mid-load: some requests were on the wire when it came.
    expect(cutInFlight).toBeGreaterThan(0);
  }, 60_000);
});
