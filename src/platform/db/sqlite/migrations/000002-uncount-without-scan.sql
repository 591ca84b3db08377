-- Deleting a delivery must not read its whole source. The first trigger
-- recomputed max(received_at) of the source for every deleted row, which the
-- (source, seq) index cannot answer without visiting every row of the
-- source: one retention batch of 500 took seconds on a source of 200,000.
-- Now the newest time is looked up only when the deleted row may have been
-- the newest, and then as the newest row by seq, one index lookup.
DROP TRIGGER deliveries_uncounted;

CREATE TRIGGER deliveries_uncounted AFTER DELETE ON deliveries BEGIN
  UPDATE sources SET
    count = count - 1,
    last_received_at = CASE
      WHEN OLD.received_at < last_received_at THEN last_received_at
      ELSE coalesce(
        (SELECT received_at FROM deliveries WHERE source = OLD.source ORDER BY seq DESC LIMIT 1),
        last_received_at)
    END
  WHERE source = OLD.source;
  DELETE FROM sources WHERE source = OLD.source AND count <= 0;
END;
