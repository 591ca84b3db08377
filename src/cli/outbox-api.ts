import type { Static } from 'typebox';
import type { DestinationListSchema, ForwardSchema } from '../api/forward-schemas.js';
import type { ForwardStatus } from '../forwarding/outbox/outbox.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { ApiClient, ApiError, isRecord, malformed } from './api-client.js';
import { CliError } from './usage.js';

/**
 * The forwarding API (CONTRACT 6) as the `forwards`, `retry` and
 * `destinations` commands use it. Answers are checked for the fields the
 * commands print; the server's strings pass through as they are (the
 * commands escape them for the terminal).
 */

/** One destination of `GET /api/destinations`, typed from the API's schema. */
export type DestinationRow = Static<typeof DestinationListSchema>['items'][number];

/**
 * One forward of `GET /api/forwards`, typed from the API's schema, except
 * `status`: one of FORWARD_STATUSES, but passed on as the server wrote it
 * (the answer is not checked against the list).
 */
export type ForwardRow = Omit<Static<typeof ForwardSchema>, 'status'> & { status: string };

export interface ForwardQuery {
  destination?: string;
  status?: ForwardStatus;
  source?: string;
}

/** Which failed forwards to retry: by id, or every failed one that matches. */
export type RetryRequest =
  { ids: string[] } | { status: 'failed'; destination?: string; source?: string; since?: string; until?: string };

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const count = (value: unknown): number => (typeof value === 'number' ? value : 0);

const STATES = ['connecting', 'connected', 'disconnected', 'closed'] as const;

/** A broker destination's connection as the server said it; null for others (or an older server). */
function connectionOf(value: unknown): DestinationRow['connection'] {
  if (!isRecord(value)) return null;
  const state = STATES.find((s) => s === value.state);
  if (state === undefined) return null;
  return { state, lastError: text(value.lastError), since: text(value.since) ?? '' };
}

const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;

/** A destination's circuit as the server said it; closed for an older server that says none. */
function circuitOf(value: unknown): DestinationRow['circuit'] {
  const closed = { state: 'closed' as const, since: null, consecutiveFailures: 0, until: null };
  if (!isRecord(value)) return closed;
  const state = CIRCUIT_STATES.find((s) => s === value.state);
  if (state === undefined) return closed;
  return { state, since: text(value.since), consecutiveFailures: count(value.consecutiveFailures), until: text(value.until) };
}

export class OutboxApi {
  constructor(private readonly api: ApiClient) {}

  async destinations(): Promise<DestinationRow[]> {
    const body = await this.api.call('/api/destinations');
    if (!isRecord(body) || !Array.isArray(body.items)) throw malformed('/api/destinations');
    return body.items.filter(isRecord).map((item) => ({
      name: String(item.name),
      kind: String(item.kind),
      url: text(item.url),
      paused: item.paused === true,
      pending: count(item.pending),
      failed: count(item.failed),
      oldestPendingAt: text(item.oldestPendingAt),
      lastSuccessAt: text(item.lastSuccessAt),
      lastFailureAt: text(item.lastFailureAt),
      lastError: text(item.lastError),
      connection: connectionOf(item.connection),
      circuit: circuitOf(item.circuit),
    }));
  }

  /** Pauses or resumes a destination; an unknown name is a CliError that names the destinations there are. */
  async setPaused(name: string, paused: boolean): Promise<void> {
    try {
      await this.api.call(`/api/destinations/${encodeURIComponent(name)}/${paused ? 'pause' : 'resume'}`, { method: 'POST' });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw unknownDestination(name, await this.destinations());
      throw error;
    }
  }

  /** One page of forwards, newest first. */
  async forwards(
    query: ForwardQuery,
    limit: number,
    cursor?: string,
  ): Promise<{ items: ForwardRow[]; nextCursor: string | null }> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
    params.set('limit', String(limit));
    if (cursor !== undefined) params.set('cursor', cursor);
    const body = await this.api.call(`/api/forwards?${params.toString()}`);
    if (!isRecord(body) || !Array.isArray(body.items)) throw malformed('/api/forwards');
    return {
      items: body.items.filter(isRecord).map((item) => ({
        id: String(item.id),
        deliveryId: String(item.deliveryId),
        seq: count(item.seq),
        source: String(item.source),
        destination: String(item.destination),
        status: String(item.status),
        attemptCount: count(item.attemptCount),
        nextAttemptAt: text(item.nextAttemptAt),
        // An older server sends neither: no time, no status.
        lastAttemptAt: text(item.lastAttemptAt),
        lastStatus: typeof item.lastStatus === 'number' ? item.lastStatus : null,
        lastError: text(item.lastError),
      })),
      nextCursor: text(body.nextCursor),
    };
  }

  async retry(request: RetryRequest): Promise<number> {
    const body = await this.api.call('/api/forwards/retry', { method: 'POST', body: request });
    if (!isRecord(body) || typeof body.retried !== 'number') throw malformed('/api/forwards/retry');
    return body.retried;
  }

  /**
   * Throws a CliError when the server knows no destination by this name:
   * the API would answer an empty list or `retried: 0`, which reads like
   * "nothing failed" when the name was mistyped.
   */
  async requireDestination(name: string): Promise<void> {
    const destinations = await this.destinations();
    if (!destinations.some((d) => d.name === name)) throw unknownDestination(name, destinations);
  }
}

/** "no destination named "ap" (did you mean "app"?); the destinations are: app, worker." */
export function unknownDestination(name: string, destinations: DestinationRow[]): CliError {
  const names = destinations.map((d) => d.name);
  const near = nearestWithin(name, names, 2);
  const hint = near === undefined ? '' : ` (did you mean "${escapeForTerminal(near)}"?)`;
  const known =
    names.length === 0
      ? 'the server has no destinations (see "destinations" in the config file)'
      : `the destinations are: ${names.map(escapeForTerminal).join(', ')}`;
  return new CliError(`no destination is named "${escapeForTerminal(name)}"${hint}; ${known}.`);
}
