import { BUCKET_MS } from '../deliveries/delivery-filter.js';
import { storedEventType } from '../deliveries/delivery-row.js';
import { escapeKey } from '../deliveries/dedup-key.js';
import type { NewDelivery } from '../deliveries/delivery-store.js';

/**
 * Held by every append transaction until it commits, so that seq values are
 * handed out in commit order across all instances: a reader that has seen
 * seq N has seen everything up to N (see docs/scaling.md).
 */
export const APPEND_LOCK = 7_305_162_021;

/**
 * A batch in one statement, run on its own (autocommit: the statement is
 * the transaction), so that the append lock is held for no round trip
 * between client and server at all: from inside the statement until its
 * commit. The lock is taken first: every row the INSERT makes is a row of
 * the join with `lock`, which exists only once the lock is held, and a
 * row's seq (its column default) is drawn when the INSERT makes it; the
 * lock is released after the commit. Then the deliveries, their forwards
 * (by the seq each got), the counts per source and per event type, the
 * time buckets, the inbox position and the NOTIFY that wakes the other
 * instances' streams, each from the rows actually inserted (a duplicate by
 * dedup key inserts none). The forwards' foreign key is checked at the end
 * of the statement, when the deliveries are there. A forward with a lease
 * (NewForward.lease) is inserted `delivering`, leased to this instance,
 * unless its destination is paused; those are answered as rows of their
 * own (`leased_id`, with no seq).
 */
export const APPEND = `WITH lock AS MATERIALIZED (
    SELECT pg_advisory_xact_lock(${APPEND_LOCK})
  ), ins AS (
    INSERT INTO deliveries (id, source, received_at, method, query, content_type, remote_address,
      headers, raw, verification_status, verification_scheme, verification_reason, dedup_key, parsed_body, event_type)
    SELECT b.id, b.source, b.received_at, b.method, b.query, b.content_type, b.remote_address, b.headers,
        substring($21::bytea FROM b.raw_at FOR b.raw_length),
        b.verification_status, b.verification_scheme, b.verification_reason, b.dedup_key, b.parsed_body, b.event_type
      FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
        $8::text[], $9::int[], $10::int[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
        AS b (id, source, received_at, method, query, content_type, remote_address, headers, raw_at, raw_length,
          verification_status, verification_scheme, verification_reason, dedup_key, parsed_body, event_type)
      CROSS JOIN lock
    ON CONFLICT (source, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
    RETURNING id, seq, source, received_at, event_type
  ), fwd AS (
    INSERT INTO forwards (id, delivery_seq, delivery_id, source, destination, status, attempt_count, budget_used,
      budget_started_at, next_attempt_at, lease_until, lease, lease_owner, attempt_started_at, created_at, updated_at, transform)
    SELECT f.id, ins.seq, ins.id, ins.source, f.destination,
      CASE WHEN f.leased THEN 'delivering' ELSE 'pending' END,
      CASE WHEN f.leased THEN 1 ELSE 0 END, CASE WHEN f.leased THEN 1 ELSE 0 END,
      ins.received_at, CASE WHEN f.leased THEN f.lease_until ELSE ins.received_at END,
      CASE WHEN f.leased THEN f.lease_until END, CASE WHEN f.leased THEN f.lease END,
      CASE WHEN f.leased THEN f.lease_owner END, CASE WHEN f.leased THEN f.started_at END,
      ins.received_at, ins.received_at, f.transform
    FROM (
      SELECT u.*, u.lease IS NOT NULL AND NOT coalesce(
          (SELECT paused FROM destinations WHERE name = u.destination), false) AS leased
      FROM unnest($17::text[], $18::text[], $19::text[], $22::text[], $23::text[], $24::text[], $25::bigint[], $26::bigint[])
        AS u (id, delivery_id, destination, transform, lease, lease_owner, started_at, lease_until)
    ) AS f
    JOIN ins ON ins.id = f.delivery_id
    RETURNING id, delivery_id, position, status
  ), src AS (
    INSERT INTO sources (source, count, last_received_at)
    SELECT source, count(*), max(received_at) FROM ins GROUP BY source
    ON CONFLICT (source) DO UPDATE SET
      count = sources.count + excluded.count,
      last_received_at = greatest(sources.last_received_at, excluded.last_received_at)
  ), typ AS (
    INSERT INTO event_types (source, event_type, count, last_received_at)
    SELECT source, event_type, count(*), max(received_at) FROM ins GROUP BY source, event_type
    ON CONFLICT (source, event_type) DO UPDATE SET
      count = event_types.count + excluded.count,
      last_received_at = greatest(event_types.last_received_at, excluded.last_received_at)
  ), bkt AS (
    INSERT INTO time_buckets (bucket, min_seq, max_seq)
    SELECT received_at / ${BUCKET_MS}, min(seq), max(seq) FROM ins GROUP BY received_at / ${BUCKET_MS}
    ON CONFLICT (bucket) DO UPDATE SET
      min_seq = least(time_buckets.min_seq, excluded.min_seq),
      max_seq = greatest(time_buckets.max_seq, excluded.max_seq)
  ), trf AS (
    INSERT INTO traffic_counts AS t (source, minute, writer, delivered)
    SELECT source, received_at - received_at % 60000, pg_backend_pid(), count(*) FROM ins GROUP BY source, received_at - received_at % 60000
    ON CONFLICT (source, minute, writer) DO UPDATE SET delivered = t.delivered + excluded.delivered
  ), pos AS (
    UPDATE inbox_position SET last_seq = greatest(last_seq, (SELECT max(seq) FROM ins)) WHERE EXISTS (SELECT 1 FROM ins)
  ), wake AS (
    SELECT pg_notify($20, '') WHERE EXISTS (SELECT 1 FROM ins)
  )
  SELECT id, seq, NULL::text AS leased_id, NULL::bigint AS leased_position FROM ins LEFT JOIN wake ON true
  UNION ALL SELECT delivery_id, NULL, id, position FROM fwd WHERE status = 'delivering'`;

/**
 * Where each delivery's body starts (from 1) in the batch's bodies joined:
 * the bodies go to PostgreSQL as one binary parameter, cut apart by
 * `substring` in APPEND. An array of bytea goes as text, each body spelt in
 * hex (twice its size) and escaped by node-postgres, then parsed back by
 * PostgreSQL (`escapeElement` alone was 0.6 % of the server's profile at
 * 1 KiB).
 */
function rawAt(batch: readonly NewDelivery[]): number[] {
  let at = 1;
  return batch.map((d) => {
    const start = at;
    at += d.raw.length;
    return start;
  });
}

/** The delivery stored under each (source, escaped dedup key), read after APPEND in its transaction. */
export const FIRST_BY_KEY = `SELECT d.source, d.dedup_key, d.id, d.seq, d.received_at
  FROM deliveries d JOIN unnest($1::text[], $2::text[]) AS k (source, dedup_key)
    ON d.source = k.source AND d.dedup_key = k.dedup_key`;

/** APPEND's parameters, $1 to $26 in order: the deliveries' columns, their forwards, the NOTIFY channel, the bodies joined, the forwards' transforms and leases. */
export function appendValues(batch: readonly NewDelivery[], channel: string): unknown[] {
  const forwards = batch.flatMap((d) => (d.forwards ?? []).map((f) => ({ ...f, deliveryId: d.id })));
  return [
    batch.map((d) => d.id), // $1
    batch.map((d) => d.source), // $2
    batch.map((d) => d.receivedAt), // $3
    batch.map((d) => d.method), // $4
    batch.map((d) => d.query), // $5
    batch.map((d) => d.contentType), // $6
    batch.map((d) => d.remoteAddress), // $7
    batch.map((d) => JSON.stringify(d.headers)), // $8
    rawAt(batch), // $9
    batch.map((d) => d.raw.length), // $10
    batch.map((d) => d.verification.status), // $11
    batch.map((d) => d.verification.scheme ?? null), // $12
    batch.map((d) => d.verification.reason ?? null), // $13
    batch.map((d) => (d.dedupKey === null ? null : escapeKey(d.dedupKey))), // $14
    batch.map((d) => d.parsedBody ?? null), // $15
    batch.map((d) => storedEventType(d.eventType)), // $16
    forwards.map((f) => f.id), // $17
    forwards.map((f) => f.deliveryId), // $18
    forwards.map((f) => f.destination), // $19
    channel, // $20
    Buffer.concat(batch.map((d) => d.raw)), // $21
    forwards.map((f) => f.transform ?? null), // $22
    forwards.map((f) => f.lease?.token ?? null), // $23
    forwards.map((f) => f.lease?.owner ?? null), // $24
    forwards.map((f) => f.lease?.startedAt ?? null), // $25
    forwards.map((f) => f.lease?.until ?? null), // $26
  ];
}
