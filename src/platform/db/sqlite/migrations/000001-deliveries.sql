-- The inbox: one row per delivery, seq is its position and is never reused.
CREATE TABLE deliveries (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
  id                  TEXT    NOT NULL UNIQUE,
  source              TEXT    NOT NULL,
  received_at         INTEGER NOT NULL,
  method              TEXT    NOT NULL,
  query               TEXT    NOT NULL,
  content_type        TEXT    NOT NULL,
  remote_address      TEXT    NOT NULL,
  headers             TEXT    NOT NULL,
  raw                 BLOB    NOT NULL,
  verification_status TEXT    NOT NULL,
  verification_scheme TEXT,
  verification_reason TEXT,
  dedup_key           TEXT
);

CREATE INDEX deliveries_by_source ON deliveries (source, seq);
CREATE INDEX deliveries_by_received_at ON deliveries (received_at);
CREATE UNIQUE INDEX deliveries_dedup ON deliveries (source, dedup_key) WHERE dedup_key IS NOT NULL;

-- Counts per source, so that listing sources never scans the inbox. Inserts
-- add to it once per batch (src/store/sqlite/sqlite-store.ts), deletes through
-- the trigger below.
CREATE TABLE sources (
  source           TEXT    PRIMARY KEY,
  count            INTEGER NOT NULL,
  last_received_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER deliveries_uncounted AFTER DELETE ON deliveries BEGIN
  UPDATE sources SET
    count = count - 1,
    last_received_at = coalesce(
      (SELECT max(received_at) FROM deliveries WHERE source = OLD.source),
      last_received_at)
  WHERE source = OLD.source;
  DELETE FROM sources WHERE source = OLD.source AND count <= 0;
END;
