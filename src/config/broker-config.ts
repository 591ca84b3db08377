import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import type { DestinationConfig } from '../forwarding/destination-config-schema.js';
import { natsSubjectProblem, parseNameTemplate, PLACEHOLDERS, sampleName } from '../forwarding/name-template.js';

/** The config checks of a broker destination (CONTRACT 7) that its schema cannot express. */

export const BROKERS = ['nats', 'amqp', 'redis'] as const;
export type Broker = (typeof BROKERS)[number];

/** What each broker's `url` may begin with, and which broker a URL of another scheme belongs to. */
const SCHEMES: Record<Broker, readonly string[]> = {
  nats: ['nats:', 'tls:'],
  amqp: ['amqp:', 'amqps:'],
  redis: ['redis:', 'rediss:'],
};

/** The broker a destination publishes to, if any. */
export function brokerOf(d: DestinationConfig): Broker | undefined {
  return BROKERS.find((broker) => d[broker] !== undefined);
}

export function brokerProblems(at: string, d: DestinationConfig, broker: Broker): string[] {
  const problems: string[] = [];
  const here = `${at}.${broker}`;
  const urlProblem = brokerUrlProblem(broker, d[broker]?.url ?? '');
  if (urlProblem !== undefined) problems.push(`${here}.url: ${urlProblem}`);
  if (d.nats !== undefined) {
    const problem = nameProblem(d.nats.subject, natsSubjectProblem);
    if (problem !== undefined) problems.push(`${here}.subject: ${problem}`);
  }
  if (d.amqp !== undefined) {
    if (Buffer.byteLength(d.amqp.exchange) > 255) problems.push(`${here}.exchange: an exchange's name is at most 255 bytes`);
    const problem = nameProblem(d.amqp.routingKey, (sample) =>
      Buffer.byteLength(sample) > 255 ? 'a routing key is at most 255 bytes' : undefined,
    );
    if (problem !== undefined) problems.push(`${here}.routingKey: ${problem}`);
  }
  if (d.redis !== undefined) {
    const problem = nameProblem(d.redis.stream, () => undefined);
    if (problem !== undefined) problems.push(`${here}.stream: ${problem}`);
  }
  for (const key of ['headers', 'sign'] as const) {
    if (d[key] !== undefined)
      problems.push(
        `${at}.${key}: only a destination with a url takes "${key}" (a broker gets the metadata docs/forwarding.md lists)`,
      );
  }
  return problems;
}

function brokerUrlProblem(broker: Broker, text: string): string | undefined {
  const expected = SCHEMES[broker].map((scheme) => `${scheme}//`).join(' or ');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `not a valid ${expected} URL (not shown: it may hold a password)`;
  }
  if (!SCHEMES[broker].includes(url.protocol)) {
    const other = BROKERS.find((b) => SCHEMES[b].includes(url.protocol));
    const hint = other === undefined ? '' : `; a ${url.protocol}// URL belongs under "${other}"`;
    return `expected a ${expected} URL, got a ${escapeJsonForTerminal(url.protocol.slice(0, 20))}// one${hint}`;
  }
  if (url.hostname === '') return `names no host (not shown: it may hold a password)`;
  if (url.hash !== '') return 'a URL with a #fragment is not a broker address';
  return undefined;
}

/** A name template's problem: a bad placeholder (with the one meant), or what the broker refuses. */
function nameProblem(text: string, brokerRule: (sample: string) => string | undefined): string | undefined {
  const parsed = parseNameTemplate(text);
  if ('problem' in parsed) {
    if (parsed.unknown === undefined) return `${parsed.problem}; the placeholders are {source} and {eventType}`;
    const near = nearestWithin(parsed.unknown, PLACEHOLDERS, 3);
    const shown = escapeJsonForTerminal(JSON.stringify(`{${parsed.unknown.slice(0, 40)}}`));
    return `${shown} is not a placeholder${near === undefined ? '' : ` (did you mean "{${near}}"?)`}; the placeholders are {source} and {eventType}`;
  }
  return brokerRule(sampleName(parsed.template));
}
