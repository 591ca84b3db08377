import type { IncomingHttpHeaders } from 'node:http';

/**
 * A delivery's event type (CONTRACT 8): from what its scheme signs, else
 * from the headers GitHub and Shopify send, else from the first of the
 * body's `type`, `event`, `eventType`, `event_type` that is a string.
 * (A source's own `eventType` setting is not read yet.)
 */
export function eventTypeOf(scheme: string | undefined, headers: IncomingHttpHeaders, body: unknown): string | null {
  const object =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const field = (name: string): string | undefined => {
    const value = object !== undefined && Object.hasOwn(object, name) ? object[name] : undefined;
    return typeof value === 'string' ? value : undefined;
  };
  switch (scheme) {
    case 'github':
      return github(headers, object) ?? null;
    case 'stripe':
    case 'standard-webhooks':
      return field('type') ?? null;
    case 'shopify':
      return header(headers, 'x-shopify-topic') ?? null;
    case 'zoom':
      return field('event') ?? null;
    case 'slack': {
      const event = object !== undefined && Object.hasOwn(object, 'event') ? object.event : undefined;
      const inner = typeof event === 'object' && event !== null ? (event as Record<string, unknown>).type : undefined;
      return typeof inner === 'string' ? inner : (field('type') ?? null);
    }
    default:
      break;
  }
  return (
    github(headers, object) ??
    header(headers, 'x-shopify-topic') ??
    field('type') ??
    field('event') ??
    field('eventType') ??
    field('event_type') ??
    null
  );
}

/** `X-GitHub-Event`, with the body's `action` as `pull_request.opened`. */
function github(headers: IncomingHttpHeaders, body: Record<string, unknown> | undefined): string | undefined {
  const event = header(headers, 'x-github-event');
  if (event === undefined) return undefined;
  const action = body !== undefined && Object.hasOwn(body, 'action') ? body.action : undefined;
  return typeof action === 'string' ? `${event}.${action}` : event;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}
