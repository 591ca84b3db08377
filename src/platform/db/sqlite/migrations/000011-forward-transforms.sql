-- Transforms on the forwarding path (docs/transforms.md, CONTRACT 10):
-- - forwards.transform:                the name of the transform of the route that
--                                      made the forward (NULL: none); each attempt
--                                      runs the transform of that name in force then.
-- - forward_attempts.transform_name,
--   forward_attempts.transform_version: the transform that ran for that attempt and
--                                      its version (NULL: none ran).
ALTER TABLE forwards ADD COLUMN transform TEXT;
ALTER TABLE forward_attempts ADD COLUMN transform_name TEXT;
ALTER TABLE forward_attempts ADD COLUMN transform_version TEXT;
