import { describe, expect, it } from 'vitest';
import type { EventTypeConfig } from '../../../src/config/source-config-schema.js';
import { eventTypeOf, MAX_EVENT_TYPE_LENGTH } from '../../../src/event-types/event-type.js';
import type { HeaderList } from '../../../src/platform/http/header-list.js';

function typeOf(
  options: { scheme?: string; headers?: HeaderList; body?: unknown; form?: string; raw?: Buffer },
  setting?: EventTypeConfig,
): string | null {
  const raw = options.raw ?? Buffer.from(options.form ?? JSON.stringify(options.body ?? {}));
  const contentType = options.form === undefined ? 'application/json' : 'application/x-www-form-urlencoded';
  return eventTypeOf({ scheme: options.scheme, headers: options.headers ?? [], contentType, raw }, setting);
}

describe('eventTypeOf (CONTRACT 8)', () => {
  it('reads each scheme where it carries the type', () => {
    const github: HeaderList = [['X-GitHub-Event', 'pull_request']];
    expect(typeOf({ scheme: 'github', headers: github, body: { action: 'opened' } })).toBe('pull_request.opened');
    expect(typeOf({ scheme: 'github', headers: [['x-github-event', 'push']], body: { action: 5 } })).toBe('push');
    expect(typeOf({ scheme: 'github', body: { type: 'not read' } })).toBeNull();
    expect(typeOf({ scheme: 'stripe', body: { type: 'invoice.paid', event: 'x' } })).toBe('invoice.paid');
    expect(typeOf({ scheme: 'standard-webhooks', body: { type: 'user.created' } })).toBe('user.created');
    expect(typeOf({ scheme: 'shopify', headers: [['X-Shopify-Topic', 'orders/create']], body: { type: 'x' } })).toBe(
      'orders/create',
    );
    expect(typeOf({ scheme: 'slack', body: { type: 'event_callback', event: { type: 'message' } } })).toBe('message');
    expect(typeOf({ scheme: 'slack', body: { type: 'url_verification' } })).toBe('url_verification');
    expect(typeOf({ scheme: 'zoom', body: { event: 'meeting.started', type: 'x' } })).toBe('meeting.started');
  });

  // Issue 28: GitHub's form-encoded webhooks (`payload=<JSON>`) got `pull_request` without the action.
  it('reads the action of a GitHub form-encoded delivery from the JSON in its payload field, with or without the scheme', () => {
    const headers: HeaderList = [['X-GitHub-Event', 'pull_request']];
    const form = `payload=${encodeURIComponent(JSON.stringify({ action: 'opened', number: 7, pull_request: { action: 'no' } }))}`;
    expect(typeOf({ scheme: 'github', headers, form })).toBe('pull_request.opened');
    expect(typeOf({ headers, form })).toBe('pull_request.opened');
    // A form's own `action` field goes first; a payload that is not JSON, or has no string action, adds nothing.
    expect(typeOf({ scheme: 'github', headers, form: `action=closed&${form}` })).toBe('pull_request.closed');
    expect(typeOf({ scheme: 'github', headers, form: 'payload=not%20json' })).toBe('pull_request');
    expect(typeOf({ scheme: 'github', headers, form: `payload=${encodeURIComponent('{"action":5}')}` })).toBe('pull_request');
  });

  it("reads the source's own setting, with no fallback when it finds nothing", () => {
    const headers: HeaderList = [['X-Event', 'order.paid']];
    expect(typeOf({ headers, body: { type: 'x' } }, { header: 'x-event' })).toBe('order.paid');
    expect(typeOf({ body: { type: 'x' } }, { header: 'X-Event' })).toBeNull();
    expect(typeOf({ body: { data: { kind: 'refund' }, type: 'x' } }, { body: 'data.kind' })).toBe('refund');
    expect(typeOf({ body: { data: { kind: 7 }, type: 'x' } }, { body: 'data.kind' })).toBeNull();
    expect(typeOf({ form: 'data.kind=form-kind&type=x' }, { body: 'data.kind' })).toBe('form-kind');
    // The paths of a setting are made ready once per setting: the same setting again, and another one, still read their own.
    const setting: EventTypeConfig = { body: 'meta.topic' };
    expect(typeOf({ body: { meta: { topic: 'a' } } }, setting)).toBe('a');
    expect(typeOf({ body: { meta: { topic: 'b' }, data: { kind: 'k' } } }, setting)).toBe('b');
    expect(typeOf({ body: { meta: { topic: 'b' }, data: { kind: 'k' } } }, { body: 'data.kind' })).toBe('k');
    expect(typeOf({ body: { meta: { topic: 'c' }, type: 't' } })).toBe('t');
    // The scheme, when it has a rule, goes first (config check-config says so of such a setting).
    expect(typeOf({ scheme: 'stripe', body: { type: 'invoice.paid' }, headers }, { header: 'X-Event' })).toBe('invoice.paid');
    expect(typeOf({ scheme: 'hmac', headers }, { header: 'X-Event' })).toBe('order.paid');
  });

  it('falls back to the GitHub and Shopify headers, then to type, event, eventType, event_type', () => {
    expect(typeOf({ headers: [['X-GitHub-Event', 'issues']], body: { action: 'closed', type: 'x' } })).toBe('issues.closed');
    expect(typeOf({ headers: [['X-Shopify-Topic', 'carts/update']], body: { type: 'x' } })).toBe('carts/update');
    expect(typeOf({ body: { event: 'e', eventType: 'et', event_type: 'e_t', type: 't' } })).toBe('t');
    expect(typeOf({ body: { type: 1, event: 'e', eventType: 'et' } })).toBe('e');
    expect(typeOf({ body: { event: {}, eventType: 'et', event_type: 'e_t' } })).toBe('et');
    expect(typeOf({ body: { event_type: 'e_t' } })).toBe('e_t');
    expect(typeOf({ form: 'event=signup&x=1' })).toBe('signup');
    expect(typeOf({ body: { nothing: 'here' } })).toBeNull();
    expect(typeOf({ raw: Buffer.from('[1,2]') })).toBeNull();
  });

  it('has no type for an empty string, replaces what PostgreSQL cannot hold, and cuts a long one', () => {
    expect(typeOf({ body: { type: '' } })).toBeNull();
    expect(typeOf({ headers: [['X-GitHub-Event', '']], body: { type: 't' } })).toBe('t');
    expect(typeOf({ body: { type: 'a\u0000b\ud800c' } })).toBe('a\ufffdb\ufffdc');
    const long = typeOf({ body: { type: 'x'.repeat(MAX_EVENT_TYPE_LENGTH - 1) + '\u{1f600}tail' } });
    expect(long).toHaveLength(MAX_EVENT_TYPE_LENGTH);
    expect(long?.endsWith('x\ufffd')).toBe(true);
  });
});
