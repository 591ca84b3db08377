-- The outbox (CONTRACT 6): see the SQLite migration of the same name.
CREATE TABLE forwards (
  position           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                 TEXT    NOT NULL UNIQUE,
  delivery_seq       BIGINT  NOT NULL REFERENCES deliveries (seq) ON DELETE CASCADE,
  delivery_id        TEXT    NOT NULL,
  source             TEXT    NOT NULL,
  destination        TEXT    NOT NULL,
  status             TEXT    NOT NULL,
  attempt_count      INTEGER NOT NULL DEFAULT 0,
  budget_used        INTEGER NOT NULL DEFAULT 0,
  budget_started_at  BIGINT  NOT NULL,
  next_attempt_at    BIGINT,
  lease_until        BIGINT,
  attempt_started_at BIGINT,
  created_at         BIGINT  NOT NULL,
  updated_at         BIGINT  NOT NULL,
  last_status        INTEGER,
  last_error         TEXT
);

CREATE INDEX forwards_due ON forwards (status, destination, next_attempt_at);
CREATE INDEX forwards_by_delivery ON forwards (delivery_seq);
CREATE INDEX forwards_open ON forwards (destination, source, delivery_seq, position)
  WHERE status IN ('pending', 'delivering');

CREATE TABLE forward_attempts (
  forward_id  TEXT    NOT NULL REFERENCES forwards (id) ON DELETE CASCADE,
  n           INTEGER NOT NULL,
  started_at  BIGINT  NOT NULL,
  duration_ms INTEGER NOT NULL,
  status      INTEGER,
  error       TEXT,
  PRIMARY KEY (forward_id, n)
);

CREATE TABLE destinations (
  name            TEXT    PRIMARY KEY,
  paused          BOOLEAN NOT NULL DEFAULT false,
  last_success_at BIGINT,
  last_failure_at BIGINT,
  last_error      TEXT
);
