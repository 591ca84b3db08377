import { describe, expect, it } from 'vitest';
import { isDeepStrictEqual } from 'node:util';
import { $in, $nin, createQueryTester } from 'sift/lib/index.js';
import { compileFilter, filterProblems, prepareLongLists, type FilterSubject } from '../../../src/forwarding/route-filter.js';

const subject = (body: unknown, extra: Partial<FilterSubject> = {}): FilterSubject => ({
  body,
  headers: {},
  query: {},
  eventType: null,
  ...extra,
});

describe('route filters', () => {
  it.each([
    [{ body: { type: 'invoice.paid' } }, { type: 'invoice.paid' }, true],
    [{ body: { type: 'invoice.paid' } }, { type: 'invoice.failed' }, false],
    [{ body: { type: 'invoice.paid' } }, { type: 'invoice.paid', other: 1 }, true],
    [{ body: { type: { $startsWith: 'invoice.' } } }, { type: 'invoice.paid' }, true],
    [{ body: { type: { $startsWith: 'invoice.' } } }, { type: 'customer.created' }, false],
    [{ body: { data: { object: { amount: { $gte: 10 } } } } }, { data: { object: { amount: 12 } } }, true],
    [{ $or: [{ body: { kind: 'a' } }, { body: { kind: { $in: ['c'] } } }] }, { kind: 'c' }, true],
    [{ 'body.type': 'invoice.paid' }, { type: 'invoice.paid' }, true],
    [{ 'body.type': { $startsWith: 'invoice.' } }, { type: 'invoice.paid' }, true],
    [{ 'body.type': { $startsWith: 'invoice.' } }, { type: 'customer.created' }, false],
    [{ 'body.type': { $endsWith: '.paid' } }, { type: 'invoice.paid' }, true],
    [{ 'body.type': { $contains: 'voice' } }, { type: 'invoice.paid' }, true],
    [{ 'body.tags': { $contains: 'vip' } }, { tags: ['a', 'vip'] }, true],
    [{ 'body.tags': { $contains: 'vip' } }, { tags: ['a'] }, false],
    [{ 'body.amount': { $gt: 100 } }, { amount: 150 }, true],
    [{ 'body.amount': { $gte: 100, $lt: 200 } }, { amount: 200 }, false],
    [{ 'body.amount': { $lte: 100 } }, { amount: 100 }, true],
    [{ 'body.kind': { $in: ['a', 'b'] } }, { kind: 'b' }, true],
    [{ 'body.kind': { $nin: ['a', 'b'] } }, { kind: 'b' }, false],
    [{ 'body.kind': { $ne: 'a' } }, { kind: 'b' }, true],
    [{ 'body.kind': { $eq: 'a' } }, { kind: 'a' }, true],
    [{ 'body.missing': { $exists: false } }, { kind: 'a' }, true],
    [{ 'body.kind': { $exists: true } }, { kind: 'a' }, true],
    [{ $or: [{ 'body.kind': 'a' }, { 'body.kind': 'b' }] }, { kind: 'b' }, true],
    [{ $and: [{ 'body.kind': 'a' }, { 'body.n': 1 }] }, { kind: 'a', n: 2 }, false],
    [{ 'body.kind': { $not: { $eq: 'a' } } }, { kind: 'b' }, true],
    [{ 'body.__proto__': 'x' }, JSON.parse('{"__proto__":"x"}') as unknown, true],
  ])('%j on %j is %s', (filter, body, expected) => {
    expect(filterProblems(filter, 'f')).toEqual([]);
    expect(compileFilter(filter)(subject(body))).toBe(expected);
  });

  it('matches headers, the query and the event type', () => {
    const test = compileFilter({ 'headers.x-topic': 'a', 'query.mode': { $in: ['live'] }, eventType: { $startsWith: 'push' } });
    expect(test(subject({}, { headers: { 'x-topic': 'a' }, query: { mode: 'live' }, eventType: 'push.created' }))).toBe(true);
    expect(test(subject({}, { headers: { 'x-topic': 'b' }, query: { mode: 'live' }, eventType: 'push.created' }))).toBe(false);
  });

  it('refuses operators outside the contract, fields it does not match, and malformed operands, naming each', () => {
    expect(filterProblems({ body: { type: { $regex: 'x' } } }, 'f')).toEqual([
      expect.stringMatching(/^f\.body\.type\.\$regex: unknown operator/),
    ]);
    expect(filterProblems({ body: { $where: 'x' } }, 'f')[0]).toMatch(/unknown operator/);
    expect(filterProblems({ 'body.a': { $startWith: 'x' } }, 'f')[0]).toMatch(/did you mean "\$startsWith"/);
    expect(filterProblems({ bdy: { a: 1 } }, 'f')[0]).toMatch(/did you mean "body"/);
    expect(filterProblems({ $or: { a: 1 } }, 'f')[0]).toMatch(/expected a list of filters/);
    expect(filterProblems({ 'body.a': { $in: 'x' } }, 'f')[0]).toMatch(/expected a list of values/);
    expect(filterProblems({ 'body.a': { $exists: 1 } }, 'f')[0]).toMatch(/expected true or false/);
    expect(filterProblems('x', 'f')[0]).toMatch(/expected an object/);
  });
});

describe('$in and $nin with long lists (issue 28: a reload with a 200,000-value $in blocked the event loop 7 s)', () => {
  const LIST: unknown[] = ['a', 1, true, null, 'B', 0, { k: 'v' }, ['x', 'y']];
  const VALUES: unknown[] = [
    'a',
    'A',
    1,
    '1',
    true,
    'true',
    false,
    null,
    0,
    -0,
    { k: 'v' },
    { k: 'w' },
    ['x', 'y'],
    ['a'],
    [2, 'a'],
  ];

  it('matches exactly as sift does: plain values, null and a missing value, objects, arrays walked', () => {
    for (const operator of ['$in', '$nin']) {
      const query = { 'body.v': { [operator]: LIST } };
      const sift = createQueryTester(query, { operations: { $in, $nin } });
      for (const value of [...VALUES, undefined]) {
        const body = value === undefined ? {} : { v: value };
        expect(compileFilter(query)(subject(body)), `${operator} ${JSON.stringify(value)}`).toBe(sift(subject(body)));
      }
    }
    expect(compileFilter({ 'body.v': { $in: [Number.NaN] } })(subject({ v: Number.NaN }))).toBe(false);
  });

  it('compares a value with the listed objects only: plain values are looked up, not compared one by one', () => {
    const many = Array.from({ length: 200_000 }, (_, i) => `v${i}`);
    let compared = 0;
    const counting = (a: unknown, b: unknown): boolean => {
      compared += 1;
      return isDeepStrictEqual(a, b);
    };
    for (const operator of ['$in', '$nin'] as const) {
      const filter = { body: { id: { [operator]: [...many, { nested: 1 }] } } };
      expect(filterProblems(filter, 'f')).toEqual([]);
      const test = compileFilter(filter, counting);
      compared = 0;
      expect(test(subject({ id: 'v199999' }))).toBe(operator === '$in');
      expect(test(subject({ id: 'nope' }))).toBe(operator === '$nin');
      expect(test(subject({ id: { nested: 1 } }))).toBe(operator === '$in');
      // One comparison with { nested: 1 } for each value tested (sift's own $in: 200,001 each).
      expect(compared, operator).toBeLessThanOrEqual(3);
    }
  });

  it('builds a long list ahead, a few thousand values per turn, and matches as when built at once (a reload)', async () => {
    const many: unknown[] = [...Array.from({ length: 20_000 }, (_, i) => `v${i}`), ...LIST];
    for (const operator of ['$in', '$nin']) {
      const atOnce = compileFilter({ $or: [{ 'body.v': { [operator]: [...many] } }] });
      const list = [...many];
      const filter = { $or: [{ 'body.v': { [operator]: list } }] };
      let turns = 0;
      const counting = setInterval(() => (turns += 1), 0);
      await prepareLongLists([filter]);
      clearInterval(counting);
      // Other work ran while it was built: the event loop went round.
      expect(turns).toBeGreaterThan(0);
      // The list as prepared is the one compiled: a value added to it afterwards is not in its Set.
      list.unshift('added later');
      const ahead = compileFilter(filter);
      expect(ahead(subject({ v: 'added later' }))).toBe(operator === '$nin');
      for (const value of [...VALUES, 'v19999', 'v20000', undefined]) {
        const body = value === undefined ? {} : { v: value };
        expect(ahead(subject(body)), `${operator} ${JSON.stringify(value)}`).toBe(atOnce(subject(body)));
      }
    }
  });
});
