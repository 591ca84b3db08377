-- dedup_key now holds the key escaped, as on PostgreSQL (src/store/dedup-key.ts):
-- a backslash as two, NUL as \0, a lone UTF-16 surrogate as \uXXXX (four
-- lower-case hex digits), because better-sqlite3 13 (Node-API, Node 22 and
-- later) sends every lone surrogate as U+FFFD, which made different keys one.
-- Keys stored before were kept as the driver wrote them: NUL as a NUL byte,
-- and, from better-sqlite3 12 (Node 20), a lone surrogate as its three
-- WTF-8 bytes (ED A0..BF 80..BF); those written as U+FFFD by the 13 line
-- cannot be told from a U+FFFD sent as such, and stay. Each row with a
-- backslash, NUL or ED byte gets the new form here, so that the same key
-- sent again is still found as a duplicate; the others do not change.
--
-- replace() cannot find a NUL, so each such key is rewritten byte by byte
-- from its hex(): escapes are the only bytes that change. The rows are
-- found on the dedup index alone (a covering scan: no body is read). The new keys are
-- set in two steps, through NULL, so that no key is, for a moment, another
-- row's old one (`\` becoming `\\` while `\\` is still there) and the
-- unique index refused the update.
CREATE TEMP TABLE escaped_dedup_keys (seq INTEGER PRIMARY KEY, dedup_key TEXT NOT NULL);

WITH RECURSIVE step (seq, done, rest) AS (
  SELECT seq, '', hex(CAST(dedup_key AS BLOB))
    FROM deliveries
    WHERE dedup_key IS NOT NULL AND (
      instr(CAST(dedup_key AS BLOB), X'5C') > 0
      OR instr(CAST(dedup_key AS BLOB), X'00') > 0
      OR instr(CAST(dedup_key AS BLOB), X'ED') > 0)
  UNION ALL
  SELECT seq,
    done || CASE
      WHEN substr(rest, 1, 2) = '5C' THEN '5C5C'
      WHEN substr(rest, 1, 2) = '00' THEN '5C30'
      WHEN substr(rest, 1, 3) IN ('EDA', 'EDB') AND substr(rest, 5, 1) IN ('8', '9', 'A', 'B') THEN
        -- ED, then 10xxxxxx twice: the code point's last 12 bits (U+D800-U+DFFF), as `\uxxxx` in hex.
        hex(printf('\u%04x', 53248
          + ((instr('0123456789ABCDEF', substr(rest, 3, 1)) - 9) * 16 + instr('0123456789ABCDEF', substr(rest, 4, 1)) - 1) * 64
          + (instr('0123456789ABCDEF', substr(rest, 5, 1)) - 9) * 16 + instr('0123456789ABCDEF', substr(rest, 6, 1)) - 1))
      ELSE substr(rest, 1, 2)
    END,
    substr(rest, CASE
      WHEN substr(rest, 1, 3) IN ('EDA', 'EDB') AND substr(rest, 5, 1) IN ('8', '9', 'A', 'B') THEN 7
      ELSE 3
    END)
  FROM step
  WHERE rest <> ''
)
INSERT INTO escaped_dedup_keys (seq, dedup_key)
  SELECT step.seq, CAST(unhex(step.done) AS TEXT)
  FROM step JOIN deliveries ON deliveries.seq = step.seq
  WHERE step.rest = '' AND step.done <> hex(CAST(deliveries.dedup_key AS BLOB));

UPDATE deliveries SET dedup_key = NULL WHERE seq IN (SELECT seq FROM escaped_dedup_keys);

UPDATE deliveries SET dedup_key = escaped_dedup_keys.dedup_key
  FROM escaped_dedup_keys WHERE escaped_dedup_keys.seq = deliveries.seq;

DROP TABLE escaped_dedup_keys;
