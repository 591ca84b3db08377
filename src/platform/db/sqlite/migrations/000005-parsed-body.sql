-- The body as JSON text where the raw bytes alone do not give it back
-- (CONTRACT 9): a multipart body's fields and files, `null` for a body a
-- source took with `accept: [any]`. NULL for every other delivery, whose body
-- is read off the raw bytes by its Content-Type, as before. A new column
-- without a default: no row is rewritten.
ALTER TABLE deliveries ADD COLUMN parsed_body TEXT;
