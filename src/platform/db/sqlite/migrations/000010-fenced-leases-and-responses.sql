-- Fenced leases, take-over after a crash, and the destination's answer
-- (docs/forwarding.md "Leases", "After a crash", "The destination's answer").
-- - forwards.lease:       an opaque token, new for every claim, held while
--                         `delivering`; a pull consumer's ack or nack must
--                         present it (else 409 lease_lost).
-- - forwards.lease_owner: the instance whose dispatcher holds a push lease
--                         (it renews them while it lives); NULL for a pull
--                         consumer's lease, which only its visibility timeout ends.
-- - forward_attempts.response: the destination's answer to that attempt as
--                         JSON `{ "headers": [[name, value]...], "body": text,
--                         "bodyTruncated": bool }` (its first 4 KiB), or NULL
--                         when there was none (a timeout, a refused connection,
--                         a broker, a pull consumer).
ALTER TABLE forwards ADD COLUMN lease TEXT;
ALTER TABLE forwards ADD COLUMN lease_owner TEXT;
ALTER TABLE forward_attempts ADD COLUMN response TEXT;
