-- Transforms on the forwarding path: see the SQLite migration of the same name.
ALTER TABLE forwards ADD COLUMN transform TEXT;
ALTER TABLE forward_attempts ADD COLUMN transform_name TEXT;
ALTER TABLE forward_attempts ADD COLUMN transform_version TEXT;
