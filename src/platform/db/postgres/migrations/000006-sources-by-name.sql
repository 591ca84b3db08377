-- The sources are listed a page at a time in code point order (COLLATE "C",
-- the order SQLite keeps them in), each page after the last name of the one
-- before: this index answers that without sorting every source, whatever
-- collation the database has.
CREATE INDEX sources_by_name ON sources (source COLLATE "C");
