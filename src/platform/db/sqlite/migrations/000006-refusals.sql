-- Refusals (CONTRACT 9): requests to /api/webhook/{source} answered with a
-- 4xx (or a 503 that the store did not cause), kept apart from the inbox.
-- `source` is '' when the name was not a valid one; `preview` holds the
-- body's first 4 KiB. seq is never reused (AUTOINCREMENT), so that a reader
-- that follows the list never takes a new refusal for one it has seen.
CREATE TABLE refusals (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT    NOT NULL,
  source       TEXT    NOT NULL,
  received_at  INTEGER NOT NULL,
  method       TEXT    NOT NULL,
  status       INTEGER NOT NULL,
  code         TEXT    NOT NULL,
  detail       TEXT    NOT NULL,
  content_type TEXT    NOT NULL,
  size         INTEGER NOT NULL,
  headers      TEXT    NOT NULL,
  preview      BLOB    NOT NULL
);

CREATE INDEX refusals_by_source ON refusals (source, seq);
CREATE INDEX refusals_by_received_at ON refusals (received_at);

-- How many refusals each source has, and all of them: the bounds are held
-- from these (src/store/sqlite/sqlite-refusals.ts), never from a count of
-- the table. Every insert and delete of refusals goes through that file.
CREATE TABLE refusal_counts (
  source TEXT    PRIMARY KEY,
  count  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE refusal_total (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  count    INTEGER NOT NULL
);
INSERT INTO refusal_total (only_row, count) VALUES (1, 0);
