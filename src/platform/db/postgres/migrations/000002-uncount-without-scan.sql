-- Deleting a delivery must not read its whole source: see the SQLite
-- migration of the same name. The newest time is looked up only when the
-- deleted row may have been the newest, as the newest row by seq.
CREATE OR REPLACE FUNCTION reception_uncount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE sources SET
    count = count - 1,
    last_received_at = CASE
      WHEN OLD.received_at < last_received_at THEN last_received_at
      ELSE coalesce(
        (SELECT d.received_at FROM deliveries d WHERE d.source = OLD.source ORDER BY d.seq DESC LIMIT 1),
        last_received_at)
    END
  WHERE source = OLD.source;
  DELETE FROM sources WHERE source = OLD.source AND count <= 0;
  RETURN NULL;
END $$;
