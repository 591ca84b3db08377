-- Issues (docs/alerts.md, CONTRACT 11): something wrong that a person should know of.
-- - id:          a UUIDv7 made when the issue opened, so ids sort by opening time (the list's order).
-- - kind:        destination_down, dead_letters, backlog, verification_failing, transform_failing.
-- - subject:     the destination, source or transform it is about.
-- - status:      open or resolved; at most one open issue per kind and subject (issues_open).
-- - count:       occurrences counted on it since it opened.
-- - first_at, last_at, resolved_at: ms since the epoch.
-- - last_error:  what the last occurrence said, when it said anything.
CREATE TABLE issues (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'resolved')),
  count INTEGER NOT NULL,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  resolved_at INTEGER,
  last_error TEXT
);
CREATE UNIQUE INDEX issues_open ON issues (kind, subject) WHERE status = 'open';
CREATE INDEX issues_by_status ON issues (status, id);
