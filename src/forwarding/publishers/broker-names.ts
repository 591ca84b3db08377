import type { NameTemplate } from '../name-template.js';

/**
 * A broker name (NATS subject, AMQP routing key, Redis stream key) for one
 * delivery (CONTRACT 7; the README's "Forwarding" says the same):
 * - `{eventType}` is `none` when the delivery has no event type (or an empty
 *   one), and at most its first 128 characters are used;
 * - in a NATS subject and an AMQP routing key, a `.` inside a value stays
 *   a token separator (`{source}.{eventType}` of `invoice.paid` from
 *   `stripe` is `stripe.invoice.paid`, so consumers bind `stripe.invoice.*`);
 *   each `*`, `>`, `#`, white space or control character becomes `_` (a
 *   value is never a wildcard, and NATS refuses white space in a subject),
 *   and so does an empty token (`a..b`, a leading or trailing dot), which
 *   NATS refuses;
 * - a Redis stream key takes any bytes: values go in unchanged.
 */

export type BrokerKind = 'nats' | 'amqp' | 'redis';

export const NO_EVENT_TYPE = 'none';
const MAX_EVENT_TYPE = 128;

export function renderName(
  template: NameTemplate,
  broker: BrokerKind,
  values: { source: string; eventType: string | null },
): string {
  return template
    .map((part) => {
      if ('text' in part) return part.text;
      const value = part.placeholder === 'source' ? values.source : eventTypeValue(values.eventType);
      return broker === 'redis' ? value : tokens(value);
    })
    .join('');
}

/** A value as tokens of a subject or routing key: its dots kept, wildcards and blanks `_`, an empty token `_`. */
function tokens(value: string): string {
  return value
    .replace(/[*>#\s\p{Cc}]/gu, '_')
    .split('.')
    .map((token) => (token === '' ? '_' : token))
    .join('.');
}

function eventTypeValue(eventType: string | null): string {
  if (eventType === null || eventType === '') return NO_EVENT_TYPE;
  return eventType.length <= MAX_EVENT_TYPE ? eventType : [...eventType].slice(0, MAX_EVENT_TYPE).join('');
}
