import type { TSchema } from 'typebox';
import { HEADER_NAME, headerValueAllowed, reservedHeader } from '../platform/http/reserved-headers.js';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { filterProblems } from '../forwarding/route-filter.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { DESTINATION_NAME, DestinationConfigSchema, type DestinationConfig } from '../forwarding/destination-config-schema.js';
import type { SourceConfig } from './source-config-schema.js';
import { brokerOf, brokerProblems, BROKERS } from './broker-config.js';

type ErrorsOf = (schema: TSchema, data: unknown, prefix: string) => string[];

/** Settings that only a destination that is pushed to takes. */
const PUSH_ONLY = ['timeoutMs', 'concurrency', 'rateLimit', 'headers', 'sign', 'allowPrivateNetwork', 'breaker'] as const;

/**
 * Checks `destinations` (each on its own, so that every bad one is named),
 * pushing the problems found; answers the names that routes may use.
 */
export function destinationProblems(destinations: unknown, problems: string[], errorsOf: ErrorsOf): Set<string> {
  const names = new Set<string>();
  if (destinations === undefined) return names;
  if (typeof destinations !== 'object' || destinations === null || Array.isArray(destinations)) {
    problems.push('destinations: expected an object that maps destination names to their settings');
    return names;
  }
  for (const [name, destination] of Object.entries(destinations)) {
    names.add(name);
    const at = /^[\w.-]+$/.test(name) ? `destinations.${name}` : `destinations[${escapeJsonForTerminal(JSON.stringify(name))}]`;
    if (!DESTINATION_NAME.test(name)) {
      problems.push(`${at}: a destination's name is 1 to 64 letters, digits, ".", "_" or "-", beginning with a letter or digit`);
    }
    const shape = errorsOf(DestinationConfigSchema, destination, at).map((line) => withoutHeaderNames(line, at, destination));
    if (shape.length > 0) problems.push(...shape);
    else problems.push(...settingProblems(at, destination as DestinationConfig));
  }
  return names;
}

/** The destinations of a config that consumers pull from (`pull: true`). */
export function pullDestinationNames(destinations: unknown): Set<string> {
  const names = new Set<string>();
  if (typeof destinations !== 'object' || destinations === null || Array.isArray(destinations)) return names;
  for (const [name, destination] of Object.entries(destinations)) {
    if (typeof destination === 'object' && destination !== null && (destination as { pull?: unknown }).pull === true)
      names.add(name);
  }
  return names;
}

/** How a destination hands forwards over: it says exactly one of these. */
const WAYS = ['url', 'pull', ...BROKERS] as const;

function settingProblems(at: string, d: DestinationConfig): string[] {
  const problems: string[] = [];
  const ways = WAYS.filter((key) => (key === 'pull' ? d.pull === true : d[key] !== undefined));
  const broker = brokerOf(d);
  // A pull destination with a url has its own message (below): it says what pull means.
  const pullWithUrl = ways.length === 2 && d.pull === true && d.url !== undefined;
  if (ways.length > 1 && !pullWithUrl) {
    problems.push(`${at}: takes one of url, pull, nats, amqp or redis; it has ${ways.join(' and ')}`);
  } else if (broker !== undefined) {
    problems.push(...brokerProblems(at, d, broker));
  } else if (d.pull === true) {
    if (d.url !== undefined) problems.push(`${at}.url: a pull destination has no url (consumers claim its forwards)`);
    for (const key of PUSH_ONLY) {
      if (d[key] !== undefined) problems.push(`${at}.${key}: only a destination with a url takes "${key}"`);
    }
  } else if (d.url === undefined) {
    problems.push(
      `${at}: needs a url to POST to, "pull: true" for consumers that claim, or a broker to publish to (nats, amqp or redis)`,
    );
  } else {
    const url = parseUrl(d.url);
    if (url === undefined) problems.push(`${at}.url: not a valid http:// or https:// URL (not shown: it may hold a password)`);
    else if (url.hash !== '') problems.push(`${at}.url: a URL with a #fragment cannot be requested`);
  }
  const headers = Object.entries(d.headers ?? {});
  headers.forEach(([name, value], index) => {
    // A header's name is never shown (it may hold a secret: `Authorization: Bearer …` written as a name), only where it is.
    const here = headerAt(at, index, headers.length);
    if (!HEADER_NAME.test(name)) problems.push(`${here}: not a valid header name`);
    // A reserved name is one of a fixed list (or Reception's own x-reception-*): showing it gives nothing away.
    else if (reservedHeader(name)) problems.push(`${at}.headers.${name}: set by Reception itself, it cannot be configured`);
    if (!headerValueAllowed(value)) {
      problems.push(`${here}: a header value holds visible Latin-1 characters, spaces and tabs only`);
    }
  });
  d.sign?.secrets.forEach((secret, index) => {
    const key = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key) || Buffer.from(key, 'base64').length < 16) {
      problems.push(
        `${at}.sign.secrets[${index}]: a Standard Webhooks secret is "whsec_" and at least 16 bytes in base64 (not shown: it is a secret)`,
      );
    }
  });
  const retry = d.retry;
  if (retry?.initialMs !== undefined && retry.maxMs !== undefined && retry.initialMs > retry.maxMs) {
    problems.push(`${at}.retry.initialMs: larger than retry.maxMs (${retry.maxMs})`);
  }
  return problems;
}

/** Where a destination's header is, without its name: `destinations.app.headers (header 2 of 3, name not shown)`. */
function headerAt(at: string, index: number, count: number): string {
  return `${at}.headers (header ${index + 1} of ${count}, name not shown)`;
}

/** A schema problem about one of the destination's headers, with the header's name replaced by where it is. */
function withoutHeaderNames(line: string, at: string, destination: unknown): string {
  const prefix = `${at}.headers.`;
  if (!line.startsWith(prefix) || typeof destination !== 'object' || destination === null) return line;
  const headers = (destination as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null) return line;
  const names = Object.keys(headers);
  // The longest name that the line's path begins with (one name may begin another).
  const index = names
    .map((name, i) => ({ name, i }))
    .filter(({ name }) => line.startsWith(`${prefix}${name}:`) || line.startsWith(`${prefix}${name}.`))
    .sort((a, b) => b.name.length - a.name.length)[0]?.i;
  if (index === undefined) return `${at}.headers: a header is not valid (names are not shown)`;
  const name = names[index] ?? '';
  return `${headerAt(at, index, names.length)}${line.slice(prefix.length + name.length)}`;
}

/** A source's `forward` routes: each names a destination of the file, with a valid filter. */
export function routeProblems(
  at: string,
  source: SourceConfig,
  destinations: ReadonlySet<string>,
  transforms: ReadonlySet<string> = new Set(),
  pullDestinations: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  (source.forward ?? []).forEach((route, index) => {
    const here = `${at}.forward[${index}]`;
    if (!destinations.has(route.to)) {
      const near = nearestWithin(route.to, [...destinations], 2);
      const shown = escapeJsonForTerminal(JSON.stringify(route.to));
      problems.push(
        `${here}.to: there is no destination ${shown}${near === undefined ? '' : ` (did you mean "${near}"?)`}; ` +
          `destinations are named under "destinations"${destinations.size === 0 ? ', and the file has none' : `: ${[...destinations].join(', ')}`}`,
      );
    }
    if (route.filter !== undefined) problems.push(...filterProblems(route.filter, `${here}.filter`));
    if (route.transform !== undefined && !transforms.has(route.transform)) {
      const near = nearestWithin(route.transform, [...transforms], 2);
      problems.push(
        `${here}.transform: there is no transform ${escapeJsonForTerminal(JSON.stringify(route.transform))}${near === undefined ? '' : ` (did you mean "${near}"?)`}; ` +
          `transforms are named under "transforms"${transforms.size === 0 ? ', and the file has none' : `: ${[...transforms].join(', ')}`}`,
      );
    }
    // A pull consumer takes the delivery as it was stored: no attempt runs there for a transform to reshape (CONTRACT 10).
    if (route.transform !== undefined && pullDestinations.has(route.to)) {
      problems.push(
        `${here}.transform: ${escapeJsonForTerminal(JSON.stringify(route.to))} is a pull destination, and transforms apply only to destinations Reception sends to (url, nats, amqp, redis)`,
      );
    }
  });
  return problems;
}

function parseUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
