-- Fenced leases, take-over after a crash, and the destination's answer:
-- see the SQLite migration of the same name.
ALTER TABLE forwards ADD COLUMN lease TEXT;
ALTER TABLE forwards ADD COLUMN lease_owner TEXT;
ALTER TABLE forward_attempts ADD COLUMN response TEXT;
-- An instance renews its push leases in one statement (by owner).
CREATE INDEX forwards_lease_owner ON forwards (lease_owner) WHERE status = 'delivering';
