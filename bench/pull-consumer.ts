import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { Api } from './forward-api.js';

/** What a pull drain measured. Times in seconds; CPU is the server's, in the phases named. */
export interface PullResult {
  forwards: number;
  seconds: number;
  claims: number;
  claimSeconds: number;
  ackSeconds: number;
  /** Server CPU while claims were in flight, and while acks were. */
  claimCpuSeconds?: number;
  ackCpuSeconds?: number;
  failedAcks: number;
  firstProblem?: string;
}

export interface PullOptions {
  destination: string;
  /** Stop once this many were acknowledged and a claim comes back empty. */
  expected: number;
  /** Forwards per claim (the contract's `max`). */
  max: number;
  /** Acks in flight at once, each on its own kept-alive connection. */
  ackConcurrency: number;
  timeoutMs: number;
  /** The server's CPU seconds so far (bench/process-stats.ts), read around each phase. */
  serverCpu: () => number | undefined;
}

const REQUEST_TIMEOUT_MS = 10_000;
/** Empty claims in a row, before all were acknowledged, after which the drain gives up. */
const MAX_EMPTY_CLAIMS = 100;

/**
 * A pull consumer as CONTRACT 6 describes one: claims `max` forwards
 * (`POST /api/destinations/{name}/claim`), acknowledges each one with its
 * own request (`POST /api/forwards/{id}/ack`, `ackConcurrency` at a time),
 * and claims again, until every expected forward is acknowledged. It runs
 * in the bench's process, so that the server's CPU can be read around each
 * phase: the sum over a thousand phases splits the server's time between
 * claims and acks (each read counts whole clock ticks, but which phase a
 * tick falls in is a fair draw).
 */
export async function pullDrain(api: Api, options: PullOptions): Promise<PullResult> {
  const origin = new URL(api.url).origin;
  const pool = new Pool(origin, { connections: options.ackConcurrency + 1 });
  const headers = { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' };
  const result: PullResult = { forwards: 0, seconds: 0, claims: 0, claimSeconds: 0, ackSeconds: 0, failedAcks: 0 };
  let claimCpu = 0;
  let ackCpu = 0;
  let cpuKnown = true;
  const measured = async <T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; cpu: number }> => {
    const cpuBefore = options.serverCpu();
    const started = performance.now();
    const value = await work();
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = options.serverCpu();
    if (cpuBefore === undefined || cpuAfter === undefined) cpuKnown = false;
    return { value, seconds, cpu: (cpuAfter ?? 0) - (cpuBefore ?? 0) };
  };
  const claimPath = `/api/destinations/${encodeURIComponent(options.destination)}/claim`;
  const claimBody = JSON.stringify({ max: options.max, visibilitySeconds: 120 });
  const claim = async (): Promise<Array<{ forwardId: string; lease: string }>> => {
    const response = await pool.request({
      path: claimPath,
      method: 'POST',
      headers,
      body: claimBody,
      headersTimeout: REQUEST_TIMEOUT_MS,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`claim answered ${response.statusCode}: ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { items: Array<{ forwardId: string; lease: string }> }).items.map(({ forwardId, lease }) => ({
      forwardId,
      lease,
    }));
  };
  const ackAll = async (ids: Array<{ forwardId: string; lease: string }>): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length) {
        const item = ids[next++];
        if (item === undefined) break;
        // The claim's lease, which the ack must present (CONTRACT 6, "Leases are fenced").
        const response = await pool.request({
          path: `/api/forwards/${item.forwardId}/ack`,
          method: 'POST',
          headers: { authorization: headers.authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ lease: item.lease }),
          headersTimeout: REQUEST_TIMEOUT_MS,
        });
        const text = await response.body.text();
        if (response.statusCode === 204) result.forwards++;
        else {
          result.failedAcks++;
          result.firstProblem ??= `ack answered ${response.statusCode}: ${text.slice(0, 300)}`;
        }
      }
    };
    await Promise.all(Array.from({ length: options.ackConcurrency }, worker));
  };

  const deadline = Date.now() + options.timeoutMs;
  const started = performance.now();
  let empty = 0;
  try {
    while (Date.now() < deadline) {
      const claimed = await measured(claim);
      result.claims++;
      result.claimSeconds += claimed.seconds;
      claimCpu += claimed.cpu;
      if (claimed.value.length === 0) {
        if (result.forwards >= options.expected) break;
        if (++empty > MAX_EMPTY_CLAIMS) {
          result.firstProblem ??= `${MAX_EMPTY_CLAIMS} empty claims in a row after ${result.forwards} of ${options.expected} acknowledged`;
          break;
        }
        await sleep(50);
        continue;
      }
      empty = 0;
      const acked = await measured(() => ackAll(claimed.value));
      result.ackSeconds += acked.seconds;
      ackCpu += acked.cpu;
    }
    if (Date.now() >= deadline) result.firstProblem ??= `not drained within ${options.timeoutMs} ms`;
  } finally {
    await pool.close();
  }
  result.seconds = (performance.now() - started) / 1000;
  if (cpuKnown) {
    result.claimCpuSeconds = claimCpu;
    result.ackCpuSeconds = ackCpu;
  }
  return result;
}
