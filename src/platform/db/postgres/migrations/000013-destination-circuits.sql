-- A circuit per push destination: see the SQLite migration of the same name.
-- Every instance on the database reads and changes the same row; an
-- instance takes the probe with one UPDATE (open → half_open).
CREATE TABLE destination_circuits (
  name                 TEXT    PRIMARY KEY,
  state                TEXT    NOT NULL DEFAULT 'closed' CHECK (state IN ('closed', 'open', 'half_open')),
  since                BIGINT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  open_until           BIGINT,
  cooldown_ms          INTEGER NOT NULL DEFAULT 0,
  last_error           TEXT
);
