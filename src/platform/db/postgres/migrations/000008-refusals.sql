-- Refusals (CONTRACT 9): requests to /api/webhook/{source} answered with a
-- 4xx (or a 503 that the store did not cause), kept apart from the inbox.
-- `source` is '' when the name was not a valid one; `preview` holds the
-- body's first 4 KiB. Writers hold an advisory lock of their own (never the
-- inbox's), so seq order is commit order among refusals.
CREATE TABLE refusals (
  seq          BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id           TEXT    NOT NULL,
  source       TEXT    NOT NULL,
  received_at  BIGINT  NOT NULL,
  method       TEXT    NOT NULL,
  status       INTEGER NOT NULL,
  code         TEXT    NOT NULL,
  detail       TEXT    NOT NULL,
  content_type TEXT    NOT NULL,
  size         BIGINT  NOT NULL,
  headers      TEXT    NOT NULL,
  preview      BYTEA   NOT NULL
);

CREATE INDEX refusals_by_source ON refusals (source, seq);
CREATE INDEX refusals_by_received_at ON refusals (received_at);

-- How many refusals each source has, and all of them: the bounds are held
-- from these (src/store/postgres/postgres-refusals.ts), never from a count
-- of the table. Every insert and delete of refusals goes through that file.
CREATE TABLE refusal_counts (
  source TEXT   PRIMARY KEY,
  count  BIGINT NOT NULL
);

CREATE TABLE refusal_total (
  only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  count    BIGINT  NOT NULL
);
INSERT INTO refusal_total (count) VALUES (0);
