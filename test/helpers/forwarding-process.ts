import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DestinationServer } from './destination-server.js';
import type { ServerProcess } from './server-process.js';
import { postWebhook } from './webhook-load.js';
import { API_TOKEN, sleep } from './server-children.js';

/**
 * What the forwarding process tests share: a config file with a destination
 * on loopback, the API with the token, and what the destination received
 * counted by delivery id (the `webhook-id` header).
 */

const auth = { authorization: `Bearer ${API_TOKEN}` };

/** An HTTP destination on 127.0.0.1 as the tests configure it: private network allowed, quick retries that do not run out. */
export function loopbackDestination(port: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    allowPrivateNetwork: true,
    timeoutMs: 500,
    retry: { attempts: 1000, initialMs: 50, maxMs: 500 },
    ...extra,
  };
}

/** Writes `config` as JSON in `dir`; answers the file's path (for RECEPTION_CONFIG). */
export function writeConfig(dir: string, config: unknown, name = 'reception.json'): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** A call to the API with the token; the JSON answer (null for an empty body). */
export async function apiCall<T>(
  server: ServerProcess,
  path: string,
  method = 'GET',
  body?: unknown,
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: (text === '' ? null : JSON.parse(text)) as T };
}

export interface DestinationItem {
  name: string;
  kind: string;
  paused: boolean;
  pending: number;
  failed: number;
  lastError: string | null;
}

export async function destinationsOf(server: ServerProcess): Promise<DestinationItem[]> {
  const { status, json } = await apiCall<{ items: DestinationItem[] }>(server, '/api/destinations');
  if (status !== 200) throw new Error(`GET /api/destinations answered ${status}`);
  return json.items;
}

export interface ForwardItem {
  id: string;
  deliveryId: string;
  destination: string;
  status: string;
  attemptCount: number;
  lastError: string | null;
}

/** The forwards in a status (first page of 500; the tests keep fewer). */
export async function forwardsIn(server: ServerProcess, status: string, destination?: string): Promise<ForwardItem[]> {
  const query = new URLSearchParams({ status, limit: '500' });
  if (destination !== undefined) query.set('destination', destination);
  const { status: code, json } = await apiCall<{ items: ForwardItem[] }>(server, `/api/forwards?${query.toString()}`);
  if (code !== 200) throw new Error(`GET /api/forwards answered ${code}`);
  return json.items;
}

/** Posts `count` small JSON deliveries to a source, one after the other; answers their ids. */
export async function sendSome(server: ServerProcess, source: string, count: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const answer = await postWebhook(server.url, source, Buffer.from(JSON.stringify({ label, n })));
    if (answer.status !== 200) throw new Error(`POST /api/webhook/${source} answered ${answer.status}: ${answer.text}`);
    ids.push((JSON.parse(answer.text) as { id: string }).id);
  }
  return ids;
}

/** How many requests the destination received for each delivery id. */
export function receiptsById(destination: DestinationServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of destination.requests) {
    const id = request.headers['webhook-id'];
    if (typeof id === 'string') counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Delivery ids received more than once. */
export function duplicated(destination: DestinationServer): string[] {
  return [...receiptsById(destination)].filter(([, count]) => count > 1).map(([id]) => id);
}

/** Waits until the destination received every id at least once; rejects naming a few that did not arrive. */
export async function untilReceived(destination: DestinationServer, ids: Iterable<string>, ms: number): Promise<number> {
  const started = performance.now();
  const wanted = [...ids];
  for (;;) {
    const received = receiptsById(destination);
    const missing = wanted.filter((id) => !received.has(id));
    if (missing.length === 0) return performance.now() - started;
    if (performance.now() - started > ms) {
      throw new Error(
        `${missing.length} of ${wanted.length} deliveries did not reach the destination within ${ms} ms, e.g. ${missing.slice(0, 5).join(', ')}`,
      );
    }
    await sleep(50);
  }
}

/** The parsed JSON log lines of a server process. */
export function logEntries(server: ServerProcess): Array<Record<string, unknown>> {
  return server.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
