import { randomBytes } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { DeliveryJson } from '../../src/api/schemas.js';

/**
 * Concurrent senders for the process tests on PostgreSQL: they post marked
 * JSON bodies, keep what was answered 200 (and what was not), and the
 * read-back helpers (also used by the SQLite crash test) then check that
 * every 200 is in the inbox, byte for byte.
 */

export interface Sent {
  marker: string;
  raw: Buffer;
  /** Base URL the request went to. */
  target: string;
  /** `performance.now()` when the request was sent. */
  sentAt: number;
}

export interface Acked extends Sent {
  id: string;
  answeredAt: number;
}

export interface Refused extends Sent {
  status: number;
  /** The problem's `code`, when the answer was one. */
  code: string | undefined;
  retryAfter: string | undefined;
  answeredAt: number;
}

export interface Failed extends Sent {
  /** The connection error, e.g. ECONNREFUSED or ECONNRESET. */
  error: string;
  failedAt: number;
}

export interface LoadTally {
  acked: Acked[];
  refused: Refused[];
  /** No answer at all: the request may or may not be stored. */
  failed: Failed[];
}

export interface WebhookAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A JSON object with a marker, whose bytes differ from what `JSON.stringify` would give back. */
export function markedBody(marker: string, n: number): Buffer {
  const pad = randomBytes(n % 7 === 0 ? 2048 : 24).toString('base64');
  const text = `{ "marker" :"${marker}",\n\t"n": ${n}.0, "text": "caf\\u00e9 ✓ 😀 \\"q\\"", "__proto__": {"x": 1}, "pad":"${pad}" }`;
  return Buffer.from(text, 'utf8');
}

export interface PostOptions {
  agent?: Agent;
  headers?: Record<string, string>;
  /** The local address to send from (any 127.0.0.0/8 address works on loopback). */
  localAddress?: string;
  timeoutMs?: number;
}

/** POSTs a JSON body to `/api/webhook/{source}`; rejects only when no answer came. */
export function postWebhook(baseUrl: string, source: string, body: Buffer, options: PostOptions = {}): Promise<WebhookAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/api/webhook/${encodeURIComponent(source)}`,
      {
        method: 'POST',
        ...(options.agent === undefined ? {} : { agent: options.agent }),
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        headers: { 'content-type': 'application/json', 'content-length': body.length, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 15_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

export interface LoadOptions {
  senders: number;
  source: string;
  /** Marker prefix, so that several runs on one inbox stay apart. */
  label: string;
  /** The base URL for a sender's next request, or undefined to wait a little (no instance to send to). */
  target: (senderId: number, n: number) => string | undefined;
  /** Checked before every request; the senders stop when it turns false. */
  running: () => boolean;
  /** The senders stop at this `performance.now()` whatever `running` says. */
  deadline: number;
  /** Pause after a refusal or a failed connection, as a sender honouring Retry-After would (shortened). */
  pauseAfterFailureMs?: number;
  onAck?: (acked: Acked) => void;
  onRefused?: (refused: Refused) => void;
  onFailed?: (failed: Failed) => void;
}

/** Sends from `senders` concurrent loops until `running()` is false; every request carries a fresh marker. */
export async function sendLoad(options: LoadOptions): Promise<LoadTally> {
  const tally: LoadTally = { acked: [], refused: [], failed: [] };
  const agent = new Agent({ keepAlive: true, maxSockets: options.senders * 2 });
  const pause = options.pauseAfterFailureMs ?? 0;
  let counter = 0;
  const sender = async (senderId: number): Promise<void> => {
    while (options.running() && performance.now() < options.deadline) {
      const n = counter++;
      const target = options.target(senderId, n);
      if (target === undefined) {
        await sleepMs(50);
        continue;
      }
      const marker = `${options.label}-s${senderId}-n${n}-${randomBytes(6).toString('hex')}`;
      const raw = markedBody(marker, n);
      const sentAt = performance.now();
      try {
        const answer = await postWebhook(target, options.source, raw, { agent });
        const answeredAt = performance.now();
        if (answer.status === 200) {
          const acked = { marker, raw, target, sentAt, answeredAt, id: (JSON.parse(answer.text) as { id: string }).id };
          tally.acked.push(acked);
          options.onAck?.(acked);
          continue;
        }
        const refused: Refused = {
          marker,
          raw,
          target,
          sentAt,
          answeredAt,
          status: answer.status,
          code: problemCode(answer.text),
          retryAfter: typeof answer.headers['retry-after'] === 'string' ? answer.headers['retry-after'] : undefined,
        };
        tally.refused.push(refused);
        options.onRefused?.(refused);
      } catch (error) {
        const failed = { marker, raw, target, sentAt, failedAt: performance.now(), error: errorCode(error) };
        tally.failed.push(failed);
        options.onFailed?.(failed);
      }
      if (pause > 0) await sleepMs(pause);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.senders }, (_, i) => sender(i)));
  } finally {
    agent.destroy();
  }
  return tally;
}

function problemCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A delivery of the API (its type from the API's schema) whose body may carry the load's marker. */
export type ListedDelivery = Omit<DeliveryJson, 'body'> & { body: { marker?: unknown } };

/** Every delivery in the inbox (of one source, or all), newest first, through the paged list API. */
export async function listAll(baseUrl: string, token: string, source?: string): Promise<ListedDelivery[]> {
  const items: ListedDelivery[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const query = new URLSearchParams({ limit: '500' });
    if (source !== undefined) query.set('source', source);
    if (cursor !== null) query.set('cursor', cursor);
    const res = await fetch(`${baseUrl}/api/deliveries?${query.toString()}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`GET /api/deliveries answered ${res.status}: ${await res.text()}`);
    const listed = (await res.json()) as { items: ListedDelivery[]; nextCursor: string | null };
    items.push(...listed.items);
    cursor = listed.nextCursor;
    if (cursor === null) return items;
  }
  throw new Error('the inbox listing did not end within 200 pages');
}

/** Reads the raw bytes of every acknowledged delivery; returns those missing or changed. */
export async function missingOrChanged(
  baseUrl: string,
  token: string,
  acked: ReadonlyArray<Pick<Acked, 'id' | 'raw'>>,
): Promise<string[]> {
  const bad: string[] = [];
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < acked.length) {
      const delivery = acked[next++];
      if (delivery === undefined) return;
      const res = await fetch(`${baseUrl}/api/deliveries/${delivery.id}/raw`, { headers: { authorization: `Bearer ${token}` } });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200 || !bytes.equals(delivery.raw)) bad.push(`${delivery.id} (${res.status})`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, () => reader()));
  return bad;
}

/**
 * Checks the whole inbox against what was sent: every marker in it was sent
 * (no phantom) and appears once. Returns the problems found.
 */
export function inboxProblems(listed: readonly ListedDelivery[], sentMarkers: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const item of listed) {
    const marker = String(item.body.marker);
    if (!sentMarkers.has(marker)) problems.push(`${item.id}: marker ${marker} was never sent`);
    if (seen.has(marker)) problems.push(`${item.id}: marker ${marker} stored twice`);
    seen.add(marker);
  }
  return problems;
}
