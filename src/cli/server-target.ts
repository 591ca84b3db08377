import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TOKEN_FILE } from '../auth/token.js';
import { stringFlag, UsageError, type FlagSpec, type FlagValues } from './usage.js';

/** Which Reception server a client command talks to, and with which token. */
export interface ServerTarget {
  /** The server's base URL, without a trailing slash. */
  base: string;
  token: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export const SERVER_FLAGS: FlagSpec[] = [
  { name: 'url', type: 'string', value: 'URL', env: 'RECEPTION_URL', help: `The Reception server (default ${DEFAULT_URL}).` },
  {
    name: 'token',
    type: 'string',
    value: 'TOKEN',
    env: 'RECEPTION_TOKEN',
    help: 'The API token; without it, the token file in RECEPTION_DATA (default ./data) is read when there is one.',
  },
];

/** Resolves --url and --token, then RECEPTION_URL and RECEPTION_TOKEN, then the local token file. */
export function serverTarget(values: FlagValues): ServerTarget {
  const urlText = stringFlag(values, 'url', 'RECEPTION_URL') ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new UsageError(`--url: "${urlText}" is not a URL (for example ${DEFAULT_URL}).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--url: expected an http:// or https:// URL, got "${urlText}".`);
  }
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const token = stringFlag(values, 'token', 'RECEPTION_TOKEN') ?? tokenFromDataDir();
  if (token === undefined) {
    throw new UsageError("no API token: pass --token, set RECEPTION_TOKEN, or run where the server's data/token file is.");
  }
  return { base, token };
}

function tokenFromDataDir(): string | undefined {
  const dir = resolve(process.env.RECEPTION_DATA ?? './data');
  try {
    const token = readFileSync(join(dir, TOKEN_FILE), 'utf8').trim();
    return token.length > 0 ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Parses a URL that a command sends deliveries to (--forward-to, --to). */
export function targetUrlFlag(flag: string, text: string | undefined): URL {
  if (text === undefined) throw new UsageError(`${flag} URL is required.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${flag}: "${text}" is not a URL (for example http://127.0.0.1:3000/webhooks).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag}: expected an http:// or https:// URL, got "${text}".`);
  }
  return url;
}
