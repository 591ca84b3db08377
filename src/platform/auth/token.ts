import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sameSecretText } from './same-secret.js';

export const TOKEN_FILE = 'token';

export interface ResolvedToken {
  token: string;
  /** True when this start generated the token (it is then printed once). */
  generated: boolean;
  file?: string;
}

/**
 * The API token: `RECEPTION_TOKEN` when set; otherwise the one kept in the
 * data directory (mode 0600), generated on first start.
 */
export function resolveToken(fromEnv: string | undefined, dataDir: string): ResolvedToken {
  if (fromEnv !== undefined) return { token: fromEnv, generated: false };
  const file = join(dataDir, TOKEN_FILE);
  try {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored.length > 0) return { token: stored, generated: false, file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const token = `rcp_${randomBytes(24).toString('base64url')}`;
  // 'w' also replaces an empty file left by an interrupted first start.
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'w' });
  chmodSync(file, 0o600);
  return { token, generated: true, file };
}

/**
 * A warning when the token file can be read or changed by users other than
 * its owner (as `permissionWarning` says for the database file): whoever
 * reads it can read and delete the whole inbox, and whoever can change it
 * chooses the token. A file written by `resolveToken` is 0600; one put
 * there by hand, or copied with another umask, may not be.
 */
export function tokenFileWarning(file: string): string | undefined {
  const mode = statSync(file).mode & 0o777;
  const read = (mode & 0o044) !== 0;
  const write = (mode & 0o022) !== 0;
  if (!read && !write) return undefined;
  const what = read && write ? 'read and changed' : read ? 'read' : 'changed';
  return (
    `${file} can be ${what} by other users of this machine (mode ${mode.toString(8).padStart(4, '0')}), and it holds the API token, ` +
    `which reads and deletes the whole inbox: chmod 600 ${file}, unless that is meant`
  );
}

/** Compares a presented token with the expected one in constant time, its length included. */
export function tokenMatches(expected: string, presented: string | undefined): boolean {
  return presented !== undefined && sameSecretText(expected, presented);
}

/** The token from an `Authorization: Bearer …` header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
