-- Traffic counts (the page's sparklines and charts, README "A picture of the
-- traffic"): per source and minute, how many deliveries were stored, how
-- many requests were refused, and what became of forward attempts. `minute`
-- is the bucket's start in milliseconds since the epoch (a multiple of
-- 60,000); hours are sums of minutes. Counts are of arrivals: deleting or
-- pruning a delivery leaves them as they are. The retention pruner deletes
-- minutes older than 48 hours.
-- - delivered:      deliveries stored (a duplicate is not), in the append's transaction
-- - refused:        requests refused (CONTRACT 9), counted by the refusal writer,
--                   those it could not keep included
-- - forwarded:      forwards that succeeded
-- - forward_failed: forward attempts that failed (a retry to come, or the last)
-- - dead:           forwards that became `failed` (the dead letter)
CREATE TABLE traffic_counts (
  source         TEXT    NOT NULL,
  minute         INTEGER NOT NULL,
  delivered      INTEGER NOT NULL DEFAULT 0,
  refused        INTEGER NOT NULL DEFAULT 0,
  forwarded      INTEGER NOT NULL DEFAULT 0,
  forward_failed INTEGER NOT NULL DEFAULT 0,
  dead           INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (source, minute)
) WITHOUT ROWID;

CREATE INDEX traffic_counts_by_minute ON traffic_counts (minute);

-- A forward's outcome is counted where it is recorded, whichever path records
-- it (an attempt settled, a lease run out, a pull consumer's ack or nack): a
-- change of status out of `delivering` into `succeeded`, `failed`, or
-- `pending` with its attempt spent (a release hands the attempt back:
-- attempt_count goes down, and nothing is counted). An ack of a forward
-- that was no longer `delivering` counts as a success too.
CREATE TRIGGER traffic_counts_forward_outcome AFTER UPDATE OF status ON forwards
WHEN NEW.status <> OLD.status AND (
  NEW.status = 'succeeded' OR (OLD.status = 'delivering' AND (
    NEW.status = 'failed' OR (NEW.status = 'pending' AND NEW.attempt_count = OLD.attempt_count))))
BEGIN
  INSERT INTO traffic_counts (source, minute, forwarded, forward_failed, dead)
  VALUES (NEW.source, NEW.updated_at - NEW.updated_at % 60000,
    NEW.status = 'succeeded', NEW.status <> 'succeeded', NEW.status = 'failed')
  ON CONFLICT (source, minute) DO UPDATE SET
    forwarded = forwarded + excluded.forwarded,
    forward_failed = forward_failed + excluded.forward_failed,
    dead = dead + excluded.dead;
END;
