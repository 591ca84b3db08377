-- Issues: see the SQLite migration of the same name. The partial unique index
-- holds "one open issue per kind and subject" across every instance on this database.
-- id sorts byte by byte (COLLATE "C"), as on SQLite, whatever the database's collation: the list's order and cursor.
CREATE TABLE issues (
  id TEXT COLLATE "C" PRIMARY KEY,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'resolved')),
  count BIGINT NOT NULL,
  first_at BIGINT NOT NULL,
  last_at BIGINT NOT NULL,
  resolved_at BIGINT,
  last_error TEXT
);
CREATE UNIQUE INDEX issues_open ON issues (kind, subject) WHERE status = 'open';
CREATE INDEX issues_by_status ON issues (status, id);
