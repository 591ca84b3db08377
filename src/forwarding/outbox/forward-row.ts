import { closedCircuit } from '../circuit/circuit.js';
import { randomBytes } from 'node:crypto';
import type { Attempt, AttemptResponse, DestinationState, Forward, ForwardStatus, ListedForward } from './outbox.js';

/** A `forwards` row as both SQL backends return it; PostgreSQL hands BIGINT back as strings. */
export interface ForwardRow {
  position: number | string;
  id: string;
  delivery_seq: number | string;
  delivery_id: string;
  source: string;
  destination: string;
  status: ForwardStatus;
  attempt_count: number;
  budget_used: number;
  budget_started_at: number | string;
  next_attempt_at: number | string | null;
  lease_until: number | string | null;
  lease: string | null;
  created_at: number | string;
  updated_at: number | string;
  last_status: number | null;
  last_error: string | null;
  transform: string | null;
}

export const FORWARD_COLUMNS = `position, id, delivery_seq, delivery_id, source, destination, status, attempt_count,
  budget_used, budget_started_at, next_attempt_at, lease_until, lease, created_at, updated_at, last_status, last_error, transform`;

/**
 * When a forward's latest attempt started: the one in flight, else the last
 * recorded (an index lookup on the attempts' primary key), as `last_attempt_at`.
 */
export const LAST_ATTEMPT_COLUMN = `COALESCE(attempt_started_at,
  (SELECT a.started_at FROM forward_attempts a WHERE a.forward_id = forwards.id ORDER BY a.n DESC LIMIT 1)) AS last_attempt_at`;

/** A forward row with its `last_attempt_at`, as the list reads it. */
export type ListedForwardRow = ForwardRow & { last_attempt_at: number | string | null };

export function listedForwardFromRow(row: ListedForwardRow): ListedForward {
  return { ...forwardFromRow(row), lastAttemptAt: orNull(row.last_attempt_at) };
}

export interface AttemptRow {
  forward_id: string;
  n: number;
  started_at: number | string;
  duration_ms: number;
  status: number | null;
  error: string | null;
  /** The destination's answer as JSON (`forward_attempts.response`); null when there was none. */
  response: string | null;
  transform_name: string | null;
  transform_version: string | null;
}

/** The columns of an AttemptRow. */
export const ATTEMPT_COLUMNS =
  'forward_id, n, started_at, duration_ms, status, error, response, transform_name, transform_version';

const orNull = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function forwardFromRow(row: ForwardRow): Forward {
  return {
    id: row.id,
    position: Number(row.position),
    deliveryId: row.delivery_id,
    deliverySeq: Number(row.delivery_seq),
    source: row.source,
    destination: row.destination,
    status: row.status,
    attemptCount: row.attempt_count,
    budgetUsed: row.budget_used,
    budgetStartedAt: Number(row.budget_started_at),
    nextAttemptAt: orNull(row.next_attempt_at),
    leaseUntil: orNull(row.lease_until),
    lease: row.lease,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    lastStatus: row.last_status,
    lastError: row.last_error,
    transform: row.transform,
  };
}

export function attemptFromRow(row: AttemptRow): Attempt {
  return {
    n: row.n,
    startedAt: Number(row.started_at),
    durationMs: row.duration_ms,
    status: row.status,
    error: row.error,
    response: responseFromColumn(row.response),
    transform: row.transform_name === null ? null : { name: row.transform_name, version: row.transform_version ?? '' },
  };
}

/** An attempt's answer as `forward_attempts.response` keeps it (JSON), or null for none. */
export function responseColumn(response: AttemptResponse | null | undefined): string | null {
  return response === undefined || response === null ? null : JSON.stringify(response);
}

/** The answer kept in `forward_attempts.response`; null for none (or for a value this version cannot read). */
export function responseFromColumn(text: string | null): AttemptResponse | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const { headers, body, bodyTruncated } = value as Record<string, unknown>;
    if (!Array.isArray(headers) || typeof body !== 'string' || typeof bodyTruncated !== 'boolean') return null;
    const pairs = headers.filter(
      (pair): pair is [string, string] =>
        Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string',
    );
    return { headers: pairs, body, bodyTruncated };
  } catch {
    return null;
  }
}

/** A new lease token (CONTRACT 6, "Leases are fenced"): 16 random bytes, base64url. */
export function newLease(): string {
  return randomBytes(16).toString('base64url');
}

/** The error recorded for an attempt whose lease ran out before its outcome was. */
export const LEASE_EXPIRED =
  'lease expired: no outcome was recorded in time (the instance stopped, or a pull consumer did not ack)';

/** Whether a forward that just spent an attempt has spent its budget: then it is `failed`. */
export function budgetSpent(
  forward: Pick<Forward, 'budgetUsed' | 'budgetStartedAt'>,
  budget: { attempts: number; maxAgeMs: number },
  now: number,
): boolean {
  return forward.budgetUsed >= budget.attempts || now - forward.budgetStartedAt >= budget.maxAgeMs;
}

/** The destination's entry of `states`, made empty (nothing pending, never attempted) the first time. */
export function stateOf(states: Map<string, DestinationState>, name: string): DestinationState {
  let found = states.get(name);
  if (found === undefined) {
    found = {
      name,
      paused: false,
      pending: 0,
      failed: 0,
      oldestPendingAt: null,
      lastSuccessAt: null,
      lastFailureAt: null,
      lastError: null,
      circuit: closedCircuit(),
    };
    states.set(name, found);
  }
  return found;
}

/**
 * The due forwards a claim takes (CONTRACT 6, "Leases are fenced"): in
 * their order, until the next would bring the bodies past `maxBytes`, and
 * always the first. Those after it are not taken (they stay pending, with no
 * attempt spent), even a smaller one: the oldest due goes first.
 */
export function withinBytes<R extends { size: number | string | null }>(rows: readonly R[], maxBytes?: number): R[] {
  if (maxBytes === undefined) return [...rows];
  const taken: R[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = Number(row.size ?? 0);
    if (taken.length > 0 && bytes + size > maxBytes) break;
    bytes += size;
    taken.push(row);
  }
  return taken;
}

/** Whether `lease` is the forward's current lease and has not run out at `now` (else the ack or nack is `lease_lost`). */
export function holdsLease(forward: Pick<Forward, 'status' | 'lease' | 'leaseUntil'>, lease: string, now: number): boolean {
  return forward.status === 'delivering' && forward.lease !== null && forward.lease === lease && (forward.leaseUntil ?? 0) > now;
}
