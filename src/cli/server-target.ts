import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TOKEN_FILE } from '../platform/auth/token.js';
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
    help: `The Reception server: a URL, or a port alone for this machine (8080: http://127.0.0.1:8080); without it, http://127.0.0.1:$RECEPTION_PORT when that is set (the server's own port variable), else ${DEFAULT_URL}.`,
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
  const given = stringFlag(values, 'url', 'RECEPTION_URL');
  const url = given === undefined ? new URL(serverUrlFromEnvironment()) : cliUrl('--url', given);
  if (url.port === '0') {
    throw new UsageError(
      `--url: port 0 is not a server's port (RECEPTION_PORT=0 lets the server pick one: give --url with the port it printed).`,
    );
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

/** Where a command sends deliveries (--forward-to, --to): a URL as {@link cliUrl} takes it, required. */
export function targetUrlFlag(flag: string, text: string | undefined): URL {
  if (text === undefined) throw new UsageError(`${flag} URL is required.`);
  return cliUrl(flag, text);
}

const EXAMPLE = 'for example 3000, 3000/webhooks, localhost:3000/webhooks or http://127.0.0.1:3000/webhooks';

/**
 * A URL wherever the command line takes one (--forward-to, --to, --url and
 * RECEPTION_URL), as `stripe listen` takes it: a full http(s) URL; a port
 * alone, with or without a path (`3000`, `:3000`, `3000/webhooks`), which
 * is this machine: http://127.0.0.1:3000/webhooks (CONTRACT: a bare port
 * never leaves the machine; `new URL` would read `3000/x` as the host
 * 0.0.11.184); or a host and port without the scheme
 * (`localhost:3000/webhooks`: http://localhost:3000/webhooks).
 */
export function cliUrl(flag: string, given: string): URL {
  const text = given.trim();
  let url: URL;
  try {
    url = new URL(withScheme(flag, text));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${flag}: "${given}" is not a URL (${EXAMPLE}).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag}: expected an http:// or https:// URL, got "${given}" (${EXAMPLE}).`);
  }
  return url;
}

/** `3000/x` and `localhost:3000/x` as http URLs; a text with a scheme is left as it is. */
function withScheme(flag: string, text: string): string {
  const port = /^:?(\d+)([/?#].*)?$/.exec(text);
  if (port !== null) {
    const number = Number(port[1]);
    if (!(number >= 1 && number <= 65535)) throw new UsageError(`${flag}: ${port[1] ?? text} is not a port (1 to 65535).`);
    const rest = port[2] ?? '';
    return `http://127.0.0.1:${number}${rest.startsWith('/') ? '' : '/'}${rest}`;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  // host:port[/path], [v6]:port, or a bare host name: `localhost:3000` would otherwise parse as the scheme "localhost:".
  const hostAndPort = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?([/?#].*)?$/i.exec(text);
  if (hostAndPort !== null) {
    // A host of digits alone is an IPv4 address to `new URL` (3000 is 0.0.11.184): never what was meant.
    if (/^\d+$/.test(hostAndPort[1] ?? '')) throw new UsageError(`${flag}: "${text}" is neither a port nor a host (${EXAMPLE}).`);
    return `http://${text}`;
  }
  return text;
}
