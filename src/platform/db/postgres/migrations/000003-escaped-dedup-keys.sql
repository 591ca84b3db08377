-- dedup_key now holds the key escaped (src/store/dedup-key.ts):
-- a backslash as two, NUL as \0, a lone UTF-16 surrogate as \uXXXX, since
-- text can hold neither of the last two. Keys stored before were kept as
-- they came; those with a backslash get it doubled here, so that the same
-- key sent again is still found as a duplicate. Only such rows change.
-- In two steps, through NULL: updated in place, `\` would become `\\`
-- while another row of its source still held `\\`, and the unique index
-- would refuse the migration.
CREATE TEMP TABLE escaped_dedup_keys ON COMMIT DROP AS
  SELECT seq, replace(dedup_key, E'\\', E'\\\\') AS dedup_key
  FROM deliveries
  WHERE strpos(dedup_key, E'\\') > 0;

UPDATE deliveries SET dedup_key = NULL
  WHERE seq IN (SELECT seq FROM escaped_dedup_keys);

UPDATE deliveries SET dedup_key = e.dedup_key
  FROM escaped_dedup_keys e WHERE e.seq = deliveries.seq;
