import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { xCrcResponse, zoomUrlValidation } from '../../../src/verify/handshakes.js';

describe('handshakes', () => {
  it("answers Zoom's endpoint.url_validation with the plain token and its hex HMAC-SHA256", () => {
    // printf 'hello' | openssl dgst -sha256 -hmac secret
    expect(zoomUrlValidation('secret', 'hello')).toEqual({
      plainToken: 'hello',
      encryptedToken: '88aab3ede8d3adf94d26ab90d3bafd4a2083070c3bcce9c014ee04a443847c0b',
    });
    const plainToken = 'qgg8vlvZRS6UYooatFL8Aw';
    const answer = zoomUrlValidation('lRyqtAp6TfGS1vXdJVbEYQ', plainToken);
    expect(answer.encryptedToken).toBe(createHmac('sha256', 'lRyqtAp6TfGS1vXdJVbEYQ').update(plainToken).digest('hex'));
    expect(zoomUrlValidation('other', plainToken).encryptedToken).not.toBe(answer.encryptedToken);
  });

  it("answers X's CRC with sha256= and the base64 HMAC-SHA256 of the token", () => {
    // printf 'hello' | openssl dgst -sha256 -hmac secret -binary | base64
    expect(xCrcResponse('secret', 'hello')).toEqual({ response_token: 'sha256=iKqz7ejTrflNJquQ07r9SiCDBww7zOnAFO4EpEOEfAs=' });
    expect(xCrcResponse('other', 'hello').response_token).not.toBe(xCrcResponse('secret', 'hello').response_token);
  });
});
