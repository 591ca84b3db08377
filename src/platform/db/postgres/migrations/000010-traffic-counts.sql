-- Traffic counts (the page's sparklines and charts, README "A picture of the
-- traffic"): per source and minute, how many deliveries were stored, how
-- many requests were refused, and what became of forward attempts. `minute`
-- is the bucket's start in milliseconds since the epoch (a multiple of
-- 60,000); hours are sums of minutes. Counts are of arrivals: deleting or
-- pruning a delivery leaves them as they are. The retention pruner deletes
-- minutes older than 48 hours. The columns mean what they mean on SQLite
-- (src/store/sqlite/migrations/000008-traffic-counts.sql).
--
-- `writer` is the backend process (pg_backend_pid()) that wrote the row:
-- several instances count at once (forward outcomes above all), and a row
-- per writer means that no two transactions ever wait for, or deadlock on,
-- the same counter row. A reader sums over writers.
CREATE TABLE traffic_counts (
  source         TEXT    NOT NULL,
  minute         BIGINT  NOT NULL,
  writer         INTEGER NOT NULL,
  delivered      BIGINT  NOT NULL DEFAULT 0,
  refused        BIGINT  NOT NULL DEFAULT 0,
  forwarded      BIGINT  NOT NULL DEFAULT 0,
  forward_failed BIGINT  NOT NULL DEFAULT 0,
  dead           BIGINT  NOT NULL DEFAULT 0,
  PRIMARY KEY (source, minute, writer)
);

CREATE INDEX traffic_counts_by_minute ON traffic_counts (minute);

-- A forward's outcome is counted where it is recorded, whichever path records
-- it (see the SQLite migration): out of `delivering` into `succeeded`,
-- `failed`, or `pending` with its attempt spent; an ack of a forward no
-- longer `delivering` counts as a success too.
CREATE FUNCTION traffic_count_forward_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO traffic_counts AS t (source, minute, writer, forwarded, forward_failed, dead)
  VALUES (NEW.source, NEW.updated_at - NEW.updated_at % 60000, pg_backend_pid(),
    (NEW.status = 'succeeded')::int, (NEW.status <> 'succeeded')::int, (NEW.status = 'failed')::int)
  ON CONFLICT (source, minute, writer) DO UPDATE SET
    forwarded = t.forwarded + excluded.forwarded,
    forward_failed = t.forward_failed + excluded.forward_failed,
    dead = t.dead + excluded.dead;
  RETURN NULL;
END
$$;

CREATE TRIGGER traffic_counts_forward_outcome AFTER UPDATE OF status ON forwards
FOR EACH ROW WHEN (NEW.status <> OLD.status AND (
  NEW.status = 'succeeded' OR (OLD.status = 'delivering' AND (
    NEW.status = 'failed' OR (NEW.status = 'pending' AND NEW.attempt_count = OLD.attempt_count)))))
EXECUTE FUNCTION traffic_count_forward_outcome();
