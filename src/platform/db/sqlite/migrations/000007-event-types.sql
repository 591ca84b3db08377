-- Finding deliveries (CONTRACT 8): event types, their counts, and the search
-- index. Nothing here reads the rows already stored, so it takes as long on
-- a full inbox as on an empty one: the columns are added without rewriting
-- the table, and deliveries stored before this migration get their type and
-- their place in the search index from a background fill, newest first, a
-- short transaction at a time (src/store/background-index.ts).

-- The event type: '' for none; NULL for a delivery stored before this
-- migration, until the background fill reaches it.
ALTER TABLE deliveries ADD COLUMN event_type TEXT;

-- The list filtered by type, with or without a source, newest first.
CREATE INDEX deliveries_by_event_type ON deliveries (event_type, seq);
CREATE INDEX deliveries_by_source_event_type ON deliveries (source, event_type, seq);
-- The list filtered by verification (`failed` is rare: found without reading the rest).
CREATE INDEX deliveries_by_verification ON deliveries (verification_status, seq);

-- Counts per source and type, so that the panel never scans the inbox:
-- appends add to it once per batch (sqlite-store.ts), deletes through the
-- trigger below, the background fill as it types older deliveries.
CREATE TABLE event_types (
  source           TEXT    NOT NULL,
  event_type       TEXT    NOT NULL,
  count            INTEGER NOT NULL,
  last_received_at INTEGER NOT NULL,
  PRIMARY KEY (source, event_type)
) WITHOUT ROWID;

CREATE TRIGGER deliveries_untyped AFTER DELETE ON deliveries WHEN OLD.event_type IS NOT NULL BEGIN
  UPDATE event_types SET
    count = count - 1,
    last_received_at = CASE
      WHEN OLD.received_at < last_received_at THEN last_received_at
      ELSE coalesce(
        (SELECT received_at FROM deliveries
          WHERE source = OLD.source AND event_type = OLD.event_type ORDER BY seq DESC LIMIT 1),
        last_received_at)
    END
  WHERE source = OLD.source AND event_type = OLD.event_type;
  DELETE FROM event_types WHERE source = OLD.source AND event_type = OLD.event_type AND count <= 0;
END;

-- The seqs received in each 10-minute bucket of time, lowest and highest:
-- a list filtered by since/until reads only the seqs its buckets span,
-- newest first, instead of sorting every delivery of the period. A superset
-- (deletes leave it as it is), so the list stays exact; appends and the
-- background fill keep it.
CREATE TABLE time_buckets (
  bucket  INTEGER PRIMARY KEY,
  min_seq INTEGER NOT NULL,
  max_seq INTEGER NOT NULL
);

-- The search index (`q`): FTS5 trigrams of each delivery's header values and
-- body text (src/store/search-text.ts), without a copy of the text
-- (contentless) and without positions (detail=none): a search finds the
-- deliveries that have every trigram of the text, then checks each
-- (sqlite-search.ts). A delivery's text is indexed in chunks of 64 Ki
-- characters that overlap by 512, as rows seq * 1024 + chunk.
CREATE VIRTUAL TABLE delivery_text USING fts5(
  text, content = '', contentless_delete = 1, tokenize = 'trigram', detail = none
);

CREATE TRIGGER deliveries_unindexed AFTER DELETE ON deliveries BEGIN
  DELETE FROM delivery_text WHERE rowid >= OLD.seq * 1024 AND rowid < (OLD.seq + 1) * 1024;
END;

-- How far the work behind the commits got. New deliveries are indexed after
-- their commit, in seq order: every one below `next_seq` is, and `next_chunks`
-- chunks of the one at `next_seq`. Deliveries stored before this migration
-- are typed and indexed from the newest down: every one above `backfill_seq`
-- is done, and `backfill_chunks` chunks of the one at `backfill_seq` (typed
-- when that is more than 0). 0 there: the fill is over.
CREATE TABLE index_position (
  only_row        INTEGER PRIMARY KEY CHECK (only_row = 1),
  next_seq        INTEGER NOT NULL,
  next_chunks     INTEGER NOT NULL,
  backfill_seq    INTEGER NOT NULL,
  backfill_chunks INTEGER NOT NULL
);
INSERT INTO index_position (only_row, next_seq, next_chunks, backfill_seq, backfill_chunks)
  SELECT 1, coalesce(max(seq), 0) + 1, 0, coalesce(max(seq), 0), 0 FROM deliveries;
