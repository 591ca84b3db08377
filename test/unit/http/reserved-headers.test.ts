import { describe, expect, it } from 'vitest';
import { destinationProblems } from '../../../src/config/destination-config.js';
import { HEADER_NAME, headerValueAllowed, reservedHeader } from '../../../src/platform/http/reserved-headers.js';
import { checkedOutput } from '../../../src/transforms/transform-output.js';

// One rule for the headers an operator writes: a destination's `headers` in the config file and a
// transform's output headers (CONTRACT 6 and 10).
describe('reserved headers', () => {
  it('are the connection, the delivery id and signature, and every x-reception-*, in any case', () => {
    for (const name of [
      'Host',
      'content-length',
      'Transfer-Encoding',
      'proxy-connection',
      'Webhook-Id',
      'webhook-signature',
      'X-Reception-Source',
      'x-reception-anything',
    ])
      expect(reservedHeader(name), name).toBe(true);
    for (const name of ['authorization', 'x-api-key', 'content-type', 'x-receptionist', 'webhook'])
      expect(reservedHeader(name), name).toBe(false);
  });

  it('refuse the same names in a destination and in a transform', () => {
    for (const name of ['proxy-connection', 'x-reception-attempt', 'x-reception-trace', 'Webhook-Timestamp']) {
      const problems: string[] = [];
      destinationProblems({ app: { url: 'https://example.com/hook', headers: { [name]: 'x' } } }, problems, () => []);
      expect(problems.join('\n'), name).toContain('set by Reception itself');
      expect(checkedOutput({ headers: { [name]: 'x' } }), name).toMatchObject({
        error: expect.stringContaining('set by Reception'),
      });
    }
  });

  it('check names and values as HTTP allows them', () => {
    expect(HEADER_NAME.test('X-Kind')).toBe(true);
    expect(HEADER_NAME.test('x kind')).toBe(false);
    expect(headerValueAllowed('invoice\tpaid é')).toBe(true);
    expect(headerValueAllowed('two\nlines')).toBe(false);
    expect(headerValueAllowed('snow ☃')).toBe(false);
  });
});
