// The statements of the PostgreSQL outbox that its claims, leases and outcomes share.

import type { ForwardRow } from './forward-row.js';

export const UNSETTLED = "('pending', 'delivering')";

/**
 * The head of each source of a destination (ordered claims): the forward it
 * has delivering, if any, else its oldest unsettled one by seq. A failed
 * forward retried, or an older delivery sent again, is older than the one
 * delivering but waits for it: one at a time per source.
 */
export const HEADS = `SELECT DISTINCT ON (source) position, next_attempt_at FROM forwards
  WHERE destination = $1 AND status IN ${UNSETTLED} ORDER BY source, status = 'delivering' DESC, delivery_seq, position`;

/**
 * Records attempt n of a forward that still exists and has taken it: an
 * outcome may come back after its delivery was deleted (the foreign key
 * would fail the whole settle). The row lock keeps a delete from slipping in
 * between; an attempt already recorded stays.
 */
export const INSERT_ATTEMPT = `INSERT INTO forward_attempts (forward_id, n, started_at, duration_ms, status, error)
  SELECT id, $2::integer, $3::bigint, $4::integer, $5::integer, $6::text FROM forwards
  WHERE id = $1 AND attempt_count >= $2::integer FOR KEY SHARE
  ON CONFLICT DO NOTHING`;
export const SETTLE = `UPDATE forwards SET status = $1, next_attempt_at = $2, lease_until = NULL, lease = NULL, attempt_started_at = NULL,
    last_status = $3, last_error = $4, updated_at = $5
  WHERE id = $6 AND status = 'delivering' AND attempt_count = $7`;
export const SUCCEEDED_AT = `INSERT INTO destinations (name, last_success_at) VALUES ($1, $2)
  ON CONFLICT (name) DO UPDATE SET last_success_at = greatest(destinations.last_success_at, excluded.last_success_at)`;
export const FAILED_AT = `INSERT INTO destinations (name, last_failure_at, last_error) VALUES ($1, $2, $3)
  ON CONFLICT (name) DO UPDATE SET last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
  WHERE coalesce(destinations.last_failure_at, 0) <= excluded.last_failure_at`;

/** A forward's row with when its current attempt started (NULL when none is under way). */
export type LeasedRow = ForwardRow & { attempt_started_at: string | null };
