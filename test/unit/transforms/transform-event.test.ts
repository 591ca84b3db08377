import { describe, expect, it } from 'vitest';
import { parsedQuery, transformEventJson } from '../../../src/transforms/transform-event.js';
import { newDelivery } from '../../helpers/delivery-factory.js';

describe('the event a transform is called with', () => {
  it('keeps headers and parameters named __proto__ and constructor as any other name', () => {
    const made = newDelivery({
      headers: [
        ['Content-Type', 'application/json'],
        ['__proto__', 'a'],
        ['__Proto__', 'b'],
        ['constructor', 'c'],
      ],
      query: '__proto__=x&__proto__=y&constructor=z',
    });
    const delivery = { ...made, forwards: [], seq: 7, eventType: null };
    const event = JSON.parse(transformEventJson(delivery)) as {
      headers: Record<string, string>;
      query: Record<string, string | string[]>;
    };
    expect(Object.entries(event.headers)).toEqual([
      ['content-type', 'application/json'],
      ['__proto__', 'a, b'],
      ['constructor', 'c'],
    ]);
    expect(Object.entries(event.query)).toEqual([
      ['__proto__', ['x', 'y']],
      ['constructor', 'z'],
    ]);
  });

  it('parses a query: one value a string, a repeated name the list of its values', () => {
    expect({ ...parsedQuery('a=1&b=2&a=3&c') }).toEqual({ a: ['1', '3'], b: '2', c: '' });
  });
});
