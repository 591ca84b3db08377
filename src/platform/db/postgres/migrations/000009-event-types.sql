-- Finding deliveries (CONTRACT 8): event types, their counts, and the search
-- index; see the SQLite migration of the same name. The column is added
-- without rewriting the table; deliveries stored before this migration get
-- their type and search text from a background fill, newest first, a short
-- transaction at a time (src/store/background-index.ts).

-- The event type: '' for none; NULL for a delivery stored before this
-- migration, until the background fill reaches it.
ALTER TABLE deliveries ADD COLUMN event_type TEXT;

-- COLLATE "C": a prefix (`invoice.*`) is a range of code points, as on SQLite.
CREATE INDEX deliveries_by_event_type ON deliveries (event_type COLLATE "C", seq);
CREATE INDEX deliveries_by_source_event_type ON deliveries (source, event_type COLLATE "C", seq);
CREATE INDEX deliveries_by_verification ON deliveries (verification_status, seq);

-- Counts per source and type: appends add to it once per batch, deletes
-- through the trigger below, the background fill as it types older ones.
CREATE TABLE event_types (
  source           TEXT   NOT NULL,
  event_type       TEXT   NOT NULL,
  count            BIGINT NOT NULL,
  last_received_at BIGINT NOT NULL,
  PRIMARY KEY (source, event_type)
);

CREATE FUNCTION reception_untype() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE event_types SET
    count = count - 1,
    last_received_at = CASE
      WHEN OLD.received_at < last_received_at THEN last_received_at
      ELSE coalesce(
        (SELECT d.received_at FROM deliveries d
          WHERE d.source = OLD.source AND d.event_type COLLATE "C" = OLD.event_type ORDER BY d.seq DESC LIMIT 1),
        last_received_at)
    END
  WHERE source = OLD.source AND event_type = OLD.event_type;
  DELETE FROM event_types WHERE source = OLD.source AND event_type = OLD.event_type AND count <= 0;
  RETURN NULL;
END $$;

CREATE TRIGGER deliveries_untyped AFTER DELETE ON deliveries
  FOR EACH ROW WHEN (OLD.event_type IS NOT NULL) EXECUTE FUNCTION reception_untype();

-- The seqs received in each 10-minute bucket of time: see the SQLite migration.
CREATE TABLE time_buckets (
  bucket  BIGINT PRIMARY KEY,
  min_seq BIGINT NOT NULL,
  max_seq BIGINT NOT NULL
);

-- The search index (`q`): each delivery's search text (header values and
-- body as text, src/store/search-text.ts) with a pg_trgm GIN index; ILIKE
-- finds the candidates through the index and checks each. Written after the
-- delivery's commit, in batches (src/store/postgres/postgres-index.ts): in
-- the commit, the GIN index cost receiving 45 % of its rate. The row goes
-- with its delivery.
CREATE TABLE delivery_text (
  seq  BIGINT PRIMARY KEY REFERENCES deliveries (seq) ON DELETE CASCADE,
  text TEXT   NOT NULL
);

-- pg_trgm where it is installed already, else installed in `public` (where
-- this user may create in it) or in Reception's own schema. It is a
-- trusted extension: a user who may create in the database may install it.
DO $$
DECLARE
  home TEXT;
BEGIN
  SELECT n.nspname INTO home FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
  IF home IS NULL THEN
    home := current_schema();
    IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
      IF has_schema_privilege('public', 'CREATE') THEN
        home := 'public';
      END IF;
    END IF;
    EXECUTE format('CREATE EXTENSION pg_trgm SCHEMA %I', home);
  END IF;
  EXECUTE format('CREATE INDEX delivery_text_trigrams ON delivery_text USING gin (text %I.gin_trgm_ops)', home);
END $$;

-- How far the work behind the commits got: every delivery below `next_seq`
-- is in the search index (appends hold a lock until they commit, so seqs
-- become visible in order and the indexer never passes one by); every
-- delivery stored before this migration and above `backfill_seq` is typed
-- and indexed. `backfill_seq` 0: the fill is over.
CREATE TABLE index_position (
  only_row     BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  next_seq     BIGINT  NOT NULL,
  backfill_seq BIGINT  NOT NULL
);
INSERT INTO index_position (next_seq, backfill_seq) SELECT coalesce(max(seq), 0) + 1, coalesce(max(seq), 0) FROM deliveries;
