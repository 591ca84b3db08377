import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two texts, one of them a secret of the user's choosing (Meta's
 * verify token), in time that depends on neither: their SHA-256 digests are
 * compared, so not even the secret's length shows.
 */
export function sameSecretText(a: string, b: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
