/**
 * The names a broker destination publishes to (a NATS subject, an AMQP
 * routing key, a Redis stream key) as the config file writes them, with
 * `{source}` and `{eventType}` in them (CONTRACT 7). How a delivery's
 * values go in: src/forwarding/broker-names.ts.
 */

export const PLACEHOLDERS = ['source', 'eventType'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** A name as written, cut at its placeholders: text and placeholders in turn. */
export type NameTemplate = ReadonlyArray<{ text: string } | { placeholder: Placeholder }>;

const LONE_BRACE = 'a "{" or "}" that does not enclose a placeholder';

/** Parses `webhooks.{source}.{eventType}`; a `{...}` that is not a placeholder, or a lone brace, is a problem. */
export function parseNameTemplate(text: string): { template: NameTemplate } | { problem: string; unknown?: string } {
  const parts: Array<{ text: string } | { placeholder: Placeholder }> = [];
  const pattern = /\{([^{}]*)\}/g;
  let last = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const literal = text.slice(last, match.index);
    if (/[{}]/.test(literal)) return { problem: LONE_BRACE };
    if (literal !== '') parts.push({ text: literal });
    const name = match[1] ?? '';
    const placeholder = PLACEHOLDERS.find((p) => p === name);
    if (placeholder === undefined) return { problem: 'an unknown placeholder', unknown: name };
    parts.push({ placeholder });
    last = match.index + match[0].length;
  }
  const rest = text.slice(last);
  if (/[{}]/.test(rest)) return { problem: LONE_BRACE };
  if (rest !== '') parts.push({ text: rest });
  return { template: parts };
}

/** The template with each placeholder as `x`: what the broker's rules are checked on at config time. */
export function sampleName(template: NameTemplate): string {
  return template.map((part) => ('text' in part ? part.text : 'x')).join('');
}

/** What is wrong with a NATS subject as written (each placeholder stands for one token); undefined: nothing. */
export function natsSubjectProblem(sample: string): string | undefined {
  if (/[\s\p{Cc}]/u.test(sample)) return 'a NATS subject holds no white space or control characters';
  if (/[*>]/.test(sample)) return 'a subject to publish to holds no wildcard ("*" or ">")';
  if (sample.split('.').some((token) => token === ''))
    return 'a NATS subject has no empty token (no leading, trailing or double ".")';
  return undefined;
}
