import { describe, expect, it } from 'vitest';
import { attachLongLists, detachLongLists, VALUES_PER_PART } from '../../../src/config/long-lists.js';

/** A reload's file handed from its thread in parts (config-reader.ts): its long lists taken out, then put back. */

const long = (tag: string): string[] => Array.from({ length: VALUES_PER_PART + 1 }, (_, n) => `${tag}${n}`);

describe('long lists of a config file', () => {
  it('takes out every list longer than a part, at any depth, and puts each back where it was', () => {
    const short = ['a', 'b'];
    const data = {
      sources: {
        open: {
          forward: [{ to: 'sink', filter: { $or: [{ eventType: { $in: long('x') } }, { 'body.id': { $nin: long('y') } }] } }],
        },
        other: { forward: [{ to: 'sink', filter: { eventType: { $in: short } } }] },
      },
    };
    const original = structuredClone(data);
    const { paths, lists } = detachLongLists(data);
    expect(paths).toEqual([
      ['sources', 'open', 'forward', 0, 'filter', '$or', 0, 'eventType', '$in'],
      ['sources', 'open', 'forward', 0, 'filter', '$or', 1, 'body.id', '$nin'],
    ]);
    expect(lists.map((list) => list[0])).toEqual(['x0', 'y0']);
    // What goes in one message is small: the long lists are not in it.
    expect(JSON.stringify(data).length).toBeLessThan(500);
    expect(data.sources.other.forward[0]?.filter.eventType.$in).toBe(short);

    const received = structuredClone(data);
    attachLongLists(received, paths, structuredClone(lists));
    expect(received).toEqual(original);
  });

  it('puts a list back under a key named __proto__ as that key, not as the prototype', () => {
    const data = JSON.parse(`{"filter": {"__proto__": ${JSON.stringify(long('p'))}}}`) as { filter: object };
    const { paths, lists } = detachLongLists(data);
    expect(paths).toEqual([['filter', '__proto__']]);
    const received = structuredClone(data);
    attachLongLists(received, paths, lists);
    expect(Object.getPrototypeOf(received.filter)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(received.filter, '__proto__')?.value).toHaveLength(VALUES_PER_PART + 1);
  });

  it('leaves a file without long lists as it is', () => {
    const data = { sources: { open: { forward: [{ to: 'sink', filter: { eventType: { $in: ['a'] } } }] } } };
    expect(detachLongLists(data)).toEqual({ paths: [], lists: [] });
  });
});
