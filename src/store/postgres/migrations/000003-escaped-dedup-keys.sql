-- dedup_key now holds the key escaped (src/store/postgres/text-values.ts):
-- a backslash as two, NUL as \0, a lone UTF-16 surrogate as \uXXXX, since
-- text can hold neither of the last two. Keys stored before were kept as
-- they came; those with a backslash get it doubled here, so that the same
-- key sent again is still found as a duplicate. Only such rows change.
UPDATE deliveries
  SET dedup_key = replace(dedup_key, E'\\', E'\\\\')
  WHERE strpos(dedup_key, E'\\') > 0;
