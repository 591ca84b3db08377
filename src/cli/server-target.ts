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
  {
    name: 'url',
    type: 'string',
    value: 'URL',
    env: 'RECEPTION_URL',
    help: `The Reception server; without it, http://127.0.0.1:$RECEPTION_PORT when that is set (the server's own port variable), else ${DEFAULT_URL}.`,
  },
  {
    name: 'token',
    type: 'string',
    value: 'TOKEN',
    env: 'RECEPTION_TOKEN',
    help: 'The API token; without it, the token file in RECEPTION_DATA (default ./data) is read when there is one.',
  },
];

/**
 * The server to talk to when neither --url nor RECEPTION_URL says: the one
 * that `RECEPTION_PORT=… npm start` (and RECEPTION_HOST) in the same shell
 * started, else the server's defaults. An address that listens on every
 * interface (0.0.0.0, ::) is reached on loopback.
 */
export function serverUrlFromEnvironment(env: Record<string, string | undefined> = process.env): string {
  const port = env.RECEPTION_PORT?.trim();
  const host = env.RECEPTION_HOST?.trim();
  if ((port === undefined || port === '') && (host === undefined || host === '')) return DEFAULT_URL;
  const reachable =
    host === undefined || host === '' || host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host;
  const shownHost = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
  return `http://${shownHost}:${port === undefined || port === '' ? '8080' : port}`;
}

/** Resolves --url and --token, then RECEPTION_URL (else RECEPTION_PORT) and RECEPTION_TOKEN, then the local token file. */
export function serverTarget(values: FlagValues): ServerTarget {
  const urlText = stringFlag(values, 'url', 'RECEPTION_URL') ?? serverUrlFromEnvironment();
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new UsageError(`--url: "${urlText}" is not a URL (for example ${DEFAULT_URL}).`);
  }
  if (url.port === '0') {
    throw new UsageError(
      `--url: port 0 is not a server's port (RECEPTION_PORT=0 lets the server pick one: give --url with the port it printed).`,
    );
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

/**
 * Where a command sends deliveries (--forward-to, --to), taken as
 * `stripe listen` takes it: a full http(s) URL, a port alone (`3000`:
 * http://localhost:3000/), or a host and port without the scheme
 * (`localhost:3000/webhooks`: http://localhost:3000/webhooks).
 */
export function targetUrlFlag(flag: string, text: string | undefined): URL {
  if (text === undefined) throw new UsageError(`${flag} URL is required.`);
  const example = 'for example 3000, localhost:3000/webhooks or http://127.0.0.1:3000/webhooks';
  let url: URL;
  try {
    url = new URL(withScheme(text.trim()));
  } catch {
    throw new UsageError(`${flag}: "${text}" is not a URL (${example}).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag}: expected an http:// or https:// URL, got "${text}" (${example}).`);
  }
  return url;
}

/** `3000` and `localhost:3000/path` as http URLs; a text with a scheme is left as it is. */
function withScheme(text: string): string {
  if (/^\d{1,5}$/.test(text)) return `http://localhost:${text}/`;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  // host:port[/path], [v6]:port, or a bare host name: `localhost:3000` would otherwise parse as the scheme "localhost:".
  if (/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?([/?#].*)?$/i.test(text)) return `http://${text}`;
  return text;
}
