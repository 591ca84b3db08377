-- The outbox (CONTRACT 6): one forward per delivery and destination, created
-- in the transaction that stores the delivery. `position` orders the outbox
-- and is the list's cursor; times are milliseconds since the epoch.
CREATE TABLE forwards (
  position           INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT    NOT NULL UNIQUE,
  delivery_seq       INTEGER NOT NULL,
  delivery_id        TEXT    NOT NULL,
  source             TEXT    NOT NULL,
  destination        TEXT    NOT NULL,
  status             TEXT    NOT NULL,
  attempt_count      INTEGER NOT NULL DEFAULT 0,
  budget_used        INTEGER NOT NULL DEFAULT 0,
  budget_started_at  INTEGER NOT NULL,
  next_attempt_at    INTEGER,
  lease_until        INTEGER,
  attempt_started_at INTEGER,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  last_status        INTEGER,
  last_error         TEXT
);

-- Claims (status, destination, due time); the destinations' counts read it too.
CREATE INDEX forwards_due ON forwards (status, destination, next_attempt_at);
-- A delivery's forwards (its JSON, retention, deletes).
CREATE INDEX forwards_by_delivery ON forwards (delivery_seq);
-- Ordered destinations: the head of each source is its oldest unsettled forward.
CREATE INDEX forwards_open ON forwards (destination, source, delivery_seq, position)
  WHERE status IN ('pending', 'delivering');

CREATE TABLE forward_attempts (
  forward_id  TEXT    NOT NULL,
  n           INTEGER NOT NULL,
  started_at  INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  status      INTEGER,
  error       TEXT,
  PRIMARY KEY (forward_id, n)
) WITHOUT ROWID;

-- What outlives a restart about a destination: its pause, and its last outcomes.
CREATE TABLE destinations (
  name            TEXT    PRIMARY KEY,
  paused          INTEGER NOT NULL DEFAULT 0,
  last_success_at INTEGER,
  last_failure_at INTEGER,
  last_error      TEXT
) WITHOUT ROWID;

-- A deleted delivery takes its forwards along, and a forward its attempts.
CREATE TRIGGER deliveries_forget_forwards AFTER DELETE ON deliveries BEGIN
  DELETE FROM forwards WHERE delivery_seq = OLD.seq;
END;

CREATE TRIGGER forwards_forget_attempts AFTER DELETE ON forwards BEGIN
  DELETE FROM forward_attempts WHERE forward_id = OLD.id;
END;
