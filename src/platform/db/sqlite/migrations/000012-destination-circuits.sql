-- A circuit per push destination (docs/circuits.md, CONTRACT 11), shared by
-- whatever writes the store. No row: closed, never failed (a success on a
-- clean circuit writes nothing).
-- - state:                'closed' | 'open' | 'half_open'
-- - since:                when it entered that state (ms); NULL: never opened
-- - consecutive_failures: failed attempts since the last success
-- - open_until:           open: when its cooldown ends; half_open: when the
--                         probe's window ends (another may then probe)
-- - cooldown_ms:          the cooldown of the latest opening (doubles while probes fail)
-- - last_error:           the error of the latest failure counted
CREATE TABLE destination_circuits (
  name                 TEXT    PRIMARY KEY,
  state                TEXT    NOT NULL DEFAULT 'closed' CHECK (state IN ('closed', 'open', 'half_open')),
  since                INTEGER,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  open_until           INTEGER,
  cooldown_ms          INTEGER NOT NULL DEFAULT 0,
  last_error           TEXT
) WITHOUT ROWID;
