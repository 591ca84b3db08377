import { describe, expect, it } from 'vitest';
import { originForm } from '../../../../src/receive/edge/request-target.js';

describe('originForm (RFC 9112 3.2.2: absolute-form targets)', () => {
  it.each([
    ['/api/webhook/a?x=1', '/api/webhook/a?x=1'],
    ['http://example.com/api/webhook/a', '/api/webhook/a'],
    ['HTTP://example.com:8080/api/webhook/a?x=1&y=http://z/', '/api/webhook/a?x=1&y=http://z/'],
    ['https://user@example.com/api/sources', '/api/sources'],
    ['http://example.com', '/'],
    ['http://example.com?x=1', '/?x=1'],
    ['*', '*'],
    ['example.com:443', 'example.com:443'],
    ['ftp://example.com/a', 'ftp://example.com/a'],
  ])('%s → %s', (target, expected) => {
    expect(originForm(target)).toBe(expected);
  });
});
