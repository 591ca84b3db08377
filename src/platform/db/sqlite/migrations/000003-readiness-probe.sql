-- One row that /readyz writes to (src/store/sqlite/sqlite-store.ts,
-- checkWritable): the store is ready only when a write commits.
CREATE TABLE reception_probe (
  only_row   INTEGER PRIMARY KEY CHECK (only_row = 1),
  checked_at INTEGER NOT NULL
);
INSERT INTO reception_probe (only_row, checked_at) VALUES (1, 0);
