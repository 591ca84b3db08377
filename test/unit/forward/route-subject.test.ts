import { describe, expect, it } from 'vitest';
import { compileRoutes, destinationsFor, type SubjectParts } from '../../../src/forwarding/routes.js';
import {
  fieldsRead,
  SUBJECT_BODY,
  SUBJECT_EVENT_TYPE,
  SUBJECT_HEADERS,
  SUBJECT_QUERY,
} from '../../../src/forwarding/route-filter.js';

const ALL = SUBJECT_BODY | SUBJECT_HEADERS | SUBJECT_QUERY | SUBJECT_EVENT_TYPE;

/** Parts that count how often each field is built. */
function countingParts(eventType: string | null = 'invoice.paid'): { parts: SubjectParts; built: Record<string, number> } {
  const built = { body: 0, headers: 0, query: 0 };
  return {
    built,
    parts: {
      body: () => {
        built.body++;
        return { type: 'invoice.paid', amount: 5 };
      },
      headers: () => {
        built.headers++;
        return { 'x-kind': 'a' };
      },
      query: () => {
        built.query++;
        return { shop: 'one' };
      },
      eventType,
    },
  };
}

describe('the fields a filter reads', () => {
  it.each([
    [{ eventType: { $ne: 'ping' } }, SUBJECT_EVENT_TYPE],
    [{ body: { type: 'a' } }, SUBJECT_BODY],
    [{ 'body.type': 'a', 'headers.x-kind': 'a' }, SUBJECT_BODY | SUBJECT_HEADERS],
    [{ $or: [{ 'query.shop': 'one' }, { eventType: 'a' }] }, SUBJECT_QUERY | SUBJECT_EVENT_TYPE],
    [{ $and: [{ body: { a: 1 } }, { $not: { headers: { b: 'c' } } }] }, SUBJECT_BODY | SUBJECT_HEADERS],
    [{ $not: { eventType: 'ping' } }, SUBJECT_EVENT_TYPE],
    // Anything it cannot tell reads all of them.
    [{ $eq: 1 }, ALL],
    [{ $or: 'not a list' }, ALL],
    [{ constructor: 1 }, ALL],
    ['not an object', ALL],
  ])('%j reads %i', (filter, bits) => {
    expect(fieldsRead(filter)).toBe(bits);
  });
});

describe('a delivery’s filter subject', () => {
  it('is built with what the filters read: an event-type filter parses no body and copies no headers', () => {
    const routes = compileRoutes([{ to: 'app', filter: { eventType: { $ne: 'ping' } } }]);
    const { parts, built } = countingParts();
    expect(destinationsFor(routes, parts)).toEqual([{ destination: 'app', transform: null }]);
    expect(built).toEqual({ body: 0, headers: 0, query: 0 });
    expect(destinationsFor(routes, countingParts('ping').parts)).toEqual([]);
  });

  it('gets a field a later route reads, once, and keeps what an earlier one built', () => {
    const routes = compileRoutes([
      { to: 'a', filter: { 'body.type': 'invoice.paid' } },
      { to: 'b', filter: { 'body.amount': 5, 'headers.x-kind': 'a' } },
      { to: 'c', filter: { 'query.shop': 'one', eventType: 'invoice.paid' } },
      { to: 'd', filter: { 'body.type': 'other' } },
      { to: 'e' },
    ]);
    const { parts, built } = countingParts();
    expect(destinationsFor(routes, parts).map((chosen) => chosen.destination)).toEqual(['a', 'b', 'c', 'e']);
    expect(built).toEqual({ body: 1, headers: 1, query: 1 });
  });

  it('is not built at all without a filter', () => {
    const { parts, built } = countingParts();
    expect(destinationsFor(compileRoutes([{ to: 'a' }, { to: 'b' }]), parts)).toHaveLength(2);
    expect(built).toEqual({ body: 0, headers: 0, query: 0 });
  });
});
