-- The inbox: one row per delivery. seq is its position; appends hold a
-- transaction-level advisory lock (see postgres-store.ts), so seq order is
-- commit order across every instance.
CREATE TABLE deliveries (
  seq                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                  TEXT   NOT NULL UNIQUE,
  source              TEXT   NOT NULL,
  received_at         BIGINT NOT NULL,
  method              TEXT   NOT NULL,
  query               TEXT   NOT NULL,
  content_type        TEXT   NOT NULL,
  remote_address      TEXT   NOT NULL,
  headers             TEXT   NOT NULL,
  raw                 BYTEA  NOT NULL,
  verification_status TEXT   NOT NULL,
  verification_scheme TEXT,
  verification_reason TEXT,
  dedup_key           TEXT
);

CREATE INDEX deliveries_by_source ON deliveries (source, seq);
CREATE INDEX deliveries_by_received_at ON deliveries (received_at);
CREATE UNIQUE INDEX deliveries_dedup ON deliveries (source, dedup_key) WHERE dedup_key IS NOT NULL;

-- Counts per source: appends add once per batch, deletes through the trigger.
CREATE TABLE sources (
  source           TEXT   PRIMARY KEY,
  count            BIGINT NOT NULL,
  last_received_at BIGINT NOT NULL
);

CREATE FUNCTION reception_uncount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE sources SET
    count = count - 1,
    last_received_at = coalesce(
      (SELECT max(received_at) FROM deliveries WHERE source = OLD.source),
      last_received_at)
  WHERE source = OLD.source;
  DELETE FROM sources WHERE source = OLD.source AND count <= 0;
  RETURN NULL;
END $$;

CREATE TRIGGER deliveries_uncounted AFTER DELETE ON deliveries
  FOR EACH ROW EXECUTE FUNCTION reception_uncount();

-- The highest seq ever committed: it never goes back when deliveries are
-- deleted, so live readers that start "now" start after it.
CREATE TABLE inbox_position (
  only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  last_seq BIGINT  NOT NULL
);
INSERT INTO inbox_position (last_seq) VALUES (0);
