import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

/**
 * What the forwarding cases ask of a running server: Reception's API, the
 * count of the bench's destination, and a sender of an exact number of
 * deliveries. Every call is bounded in time.
 */

const TIMEOUT_MS = 10_000;

export interface Api {
  url: string;
  token: string;
}

/** One call of Reception's API; answers the parsed JSON (null for an empty body) and throws on an unexpected status. */
export async function call<T>(api: Api, method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return (text === '' ? null : JSON.parse(text)) as T;
}

export interface DestinationCounts {
  pending: number;
  failed: number;
}

/** `GET /api/destinations`: the unsettled (pending + delivering) and failed forwards of one destination. */
export async function destinationCounts(api: Api, name: string): Promise<DestinationCounts> {
  const list = await call<{ items: Array<{ name: string; pending: number; failed: number }> }>(api, 'GET', '/api/destinations');
  const found = list.items.find((item) => item.name === name);
  return { pending: found?.pending ?? 0, failed: found?.failed ?? 0 };
}

/** `GET /api/sources`: the deliveries stored, over every source (the bench's few fit in one page). */
export async function storedTotal(api: Api): Promise<number> {
  const list = await call<{ items: Array<{ count: number }> }>(api, 'GET', '/api/sources?limit=500');
  return list.items.reduce((total, item) => total + item.count, 0);
}

/** What the bench's destination (bench/forward-destination.ts) has answered 204 so far. */
export async function receivedBy(destinationUrl: string): Promise<number> {
  const response = await fetch(`${destinationUrl}/count`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (response.status !== 200) throw new Error(`GET ${destinationUrl}/count answered ${response.status}`);
  return ((await response.json()) as { received: number }).received;
}

/** Polls `check` every `everyMs` until it answers true; false when `timeoutMs` passed first. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

export interface SendResult {
  ok: number;
  failed: number;
  seconds: number;
  /** The first unexpected answer, if any. */
  firstProblem?: string;
}

/**
 * POSTs `body` to `url` exactly `count` times over `connections` kept-alive
 * connections (undici), for the cases that need a known number of
 * deliveries (wrk runs for a time, not a count). Bounded by `timeoutMs`.
 */
export async function sendMany(
  url: string,
  body: Buffer,
  count: number,
  connections: number,
  timeoutMs: number,
): Promise<SendResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1 });
  const deadline = Date.now() + timeoutMs;
  let next = 0;
  const result: SendResult = { ok: 0, failed: 0, seconds: 0 };
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count && Date.now() < deadline) {
      next++;
      try {
        const response = await pool.request({
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
          headersTimeout: TIMEOUT_MS,
          bodyTimeout: TIMEOUT_MS,
        });
        const text = await response.body.text();
        if (response.statusCode === 200) result.ok++;
        else {
          result.failed++;
          result.firstProblem ??= `${response.statusCode}: ${text.slice(0, 200)}`;
        }
      } catch (error) {
        result.failed++;
        result.firstProblem ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await pool.close();
  }
  result.seconds = (performance.now() - started) / 1000;
  if (next < count) result.firstProblem ??= `only ${next} of ${count} sent within ${timeoutMs} ms`;
  return result;
}
