/**
 * A top-level string field of a JSON object body, such as Stripe's event
 * `id` or Slack's `event_id`; undefined when the body is not a JSON object
 * or the field is not a non-empty string. Called only after the signature
 * has passed.
 */
export function jsonStringField(raw: Buffer, field: string): string | undefined {
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trimStart().startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fieldValue: unknown = Object.getOwnPropertyDescriptor(value, field)?.value;
  return typeof fieldValue === 'string' && fieldValue.length > 0 ? fieldValue : undefined;
}
