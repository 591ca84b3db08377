import type { Static } from 'typebox';
import type { DeliveryJson, DeliveryPage, SourceListSchema } from '../api/schemas.js';
import type { RefusalJson, RefusalPage } from '../api/refusal-schemas.js';
import { describeError } from './backoff.js';
import type { ServerTarget } from './server-target.js';
import { CliError } from './usage.js';

/** An answer from the Reception API that was not a success. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  /**
   * True when trying again later may succeed (the server is starting,
   * overloaded or behind a proxy that lost it). Reception's own `429
   * rate_limited` on the API answers a wrong token from an address that
   * sent too many: trying again with it cannot succeed.
   */
  get transient(): boolean {
    if (this.status === 429) return !wrongToken(this.status, this.code);
    return this.status === 408 || this.status >= 500;
  }
}

// The answers' types come from the API's schemas (the answers are still checked at run time below).
export type { DeliveryPage };

export type SourcePage = Static<typeof SourceListSchema>;

export type SourceSummary = SourcePage['items'][number];

/**
 * A server that no request ever reached: the command stops with this
 * instead of retrying (a mistyped --url, a server not started). A server
 * that answered once and then went away is waited for.
 */
export function cannotConnect(base: string, error: unknown): CliError {
  return new CliError(`cannot connect to ${base}, is Reception running? (--url) [${describeError(error)}]`);
}

/** The read side of the Reception API (CONTRACT 3) over fetch. */
export class ApiClient {
  /** True once the server answered anything: from then on, a failed connection is worth waiting out. */
  reached = false;

  constructor(readonly target: ServerTarget) {}

  /** A page of the list; `query` holds its parameters (`limit`, `cursor` and the filters, CONTRACT 8). */
  async listDeliveries(query: Record<string, string | number | undefined>, signal?: AbortSignal): Promise<DeliveryPage> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
    const body = await this.json(`/api/deliveries?${params.toString()}`, signal);
    if (!isRecord(body) || !Array.isArray(body.items)) throw malformed('/api/deliveries');
    const nextCursor = typeof body.nextCursor === 'string' ? body.nextCursor : null;
    return { items: body.items.map((item) => asDelivery(item)), nextCursor };
  }

  async getDelivery(id: string, signal?: AbortSignal): Promise<DeliveryJson> {
    return asDelivery(await this.json(`/api/deliveries/${encodeURIComponent(id)}`, signal));
  }

  /** The exact body bytes of a delivery. */
  async getRaw(id: string, signal?: AbortSignal): Promise<Buffer> {
    const response = await this.request(`/api/deliveries/${encodeURIComponent(id)}/raw`, signal);
    return Buffer.from(await response.arrayBuffer());
  }

  /** One page of the sources, by name (`GET /api/sources`); `q` keeps names that contain it, ignoring case. */
  async sources(query: { q?: string; limit?: number; cursor?: string } = {}, signal?: AbortSignal): Promise<SourcePage> {
    const params = new URLSearchParams();
    if (query.q !== undefined) params.set('q', query.q);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    const body = await this.json(`/api/sources?${params.toString()}`, signal);
    if (!isRecord(body) || !Array.isArray(body.items)) throw malformed('/api/sources');
    return {
      items: body.items.filter(isRecord).map((item) => ({
        source: String(item.source),
        count: typeof item.count === 'number' ? item.count : 0,
        lastReceivedAt: String(item.lastReceivedAt),
      })),
      nextCursor: typeof body.nextCursor === 'string' ? body.nextCursor : null,
    };
  }

  /** One page of the refused requests, newest first (`GET /api/refusals`). */
  async listRefusals(query: { source?: string; limit?: number; cursor?: string }, signal?: AbortSignal): Promise<RefusalPage> {
    const params = new URLSearchParams();
    if (query.source !== undefined) params.set('source', query.source);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    const body = await this.json(`/api/refusals?${params.toString()}`, signal);
    if (!isRecord(body) || !Array.isArray(body.items)) throw malformed('/api/refusals');
    const nextCursor = typeof body.nextCursor === 'string' ? body.nextCursor : null;
    return { items: body.items.map((item) => asRefusal(item)), nextCursor };
  }

  /** How many deliveries the inbox (or one source) holds: the counts of every page of sources added up. */
  async deliveryCount(source?: string, signal?: AbortSignal): Promise<number> {
    let total = 0;
    let cursor: string | undefined;
    for (;;) {
      const page = await this.sources(
        { limit: 500, ...(source === undefined ? {} : { q: source }), ...(cursor === undefined ? {} : { cursor }) },
        signal,
      );
      for (const item of page.items) if (source === undefined || item.source === source) total += item.count;
      if (page.nextCursor === null) return total;
      cursor = page.nextCursor;
    }
  }

  /** The seq of the newest delivery (of one source), or 0 when there is none: "the present". */
  async latestSeq(source: string | undefined, signal?: AbortSignal): Promise<number> {
    const page = await this.listDeliveries({ limit: 1, ...(source === undefined ? {} : { source }) }, signal);
    return page.items[0]?.seq ?? 0;
  }

  headers(): Record<string, string> {
    return { authorization: `Bearer ${this.target.token}` };
  }

  /** GETs `path`, or POSTs `body` as JSON to it; the answer's JSON, or undefined for a 204. */
  async call(path: string, init: { method?: 'GET' | 'POST'; body?: unknown; signal?: AbortSignal } = {}): Promise<unknown> {
    const response = await this.request(path, init.signal, init.method ?? 'GET', init.body);
    if (response.status === 204) return undefined;
    return (await response.json()) as unknown;
  }

  private async json(path: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(path, signal === undefined ? {} : { signal });
  }

  private async request(path: string, signal?: AbortSignal, method = 'GET', body?: unknown): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${this.target.base}${path}`, {
        method,
        headers: {
          ...this.headers(),
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      if (!this.reached) throw cannotConnect(this.target.base, error);
      throw new CliError(`lost the connection to ${this.target.base}: ${describeError(error)}`);
    }
    this.reached = true;
    if (!response.ok) throw await apiError(response);
    return response;
  }
}

/** Turns a failed answer (problem+json or anything else) into an ApiError. */
export async function apiError(response: Response): Promise<ApiError> {
  let code = 'http_error';
  let detail = `${response.status} ${response.statusText}`;
  try {
    const problem = (await response.json()) as unknown;
    if (isRecord(problem)) {
      if (typeof problem.code === 'string') code = problem.code;
      if (typeof problem.detail === 'string') detail = `${response.status} ${code}: ${problem.detail}`;
    }
  } catch {
    // not JSON: keep the status line
  }
  if (response.status === 401 || wrongToken(response.status, code)) detail = `${detail} (check --token or RECEPTION_TOKEN)`;
  return new ApiError(response.status, code, detail);
}

/** Checks the fields the CLI relies on; the rest of the Delivery is passed through as is. */
export function asDelivery(value: unknown): DeliveryJson {
  if (
    !isRecord(value) ||
    typeof value.id !== 'string' ||
    typeof value.seq !== 'number' ||
    typeof value.source !== 'string' ||
    typeof value.method !== 'string' ||
    !Array.isArray(value.headers)
  ) {
    throw new Error('The server sent something that is not a Delivery.');
  }
  const headers = value.headers.filter(
    (pair): pair is [string, string] =>
      Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string',
  );
  return { ...(value as unknown as DeliveryJson), headers };
}

/** Checks the fields the CLI relies on; the rest of the Refusal is passed through as is. */
export function asRefusal(value: unknown): RefusalJson {
  if (
    !isRecord(value) ||
    typeof value.seq !== 'number' ||
    typeof value.id !== 'string' ||
    !(typeof value.source === 'string' || value.source === null) ||
    typeof value.receivedAt !== 'string' ||
    typeof value.method !== 'string' ||
    typeof value.status !== 'number' ||
    typeof value.code !== 'string' ||
    typeof value.detail !== 'string' ||
    typeof value.size !== 'number' ||
    typeof value.bodyPreview !== 'string'
  ) {
    throw new Error('The server sent something that is not a Refusal.');
  }
  return value as unknown as RefusalJson;
}

/** The API's answer to a wrong token: 401, or 429 rate_limited once the address sent too many. */
function wrongToken(status: number, code: string): boolean {
  return status === 401 || (status === 429 && code === 'rate_limited');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function malformed(path: string): Error {
  return new Error(`The server's answer to ${path} is not what Reception sends; is --url a Reception server?`);
}
