-- One row that /readyz writes to (src/store/postgres/postgres-store.ts,
-- checkWritable): the store is ready only when a write commits, which a
-- read-only replica, a read-only transaction default or a full disk refuse.
CREATE TABLE reception_probe (
  only_row   BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  checked_at BIGINT  NOT NULL
);
INSERT INTO reception_probe (checked_at) VALUES (0);
