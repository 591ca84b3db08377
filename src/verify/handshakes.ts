import { createHmac } from 'node:crypto';

/**
 * Zoom's `endpoint.url_validation` answer: the `plainToken` it sent and its
 * HMAC-SHA256, in hex, keyed by the app's secret token. The request itself is
 * signed like any Zoom event; check it with the source's verifier first, and
 * answer with the secret that matched (`secretIndex`).
 */
export function zoomUrlValidation(secret: string, plainToken: string): { plainToken: string; encryptedToken: string } {
  return { plainToken, encryptedToken: createHmac('sha256', secret).update(plainToken).digest('hex') };
}

/**
 * X's CRC answer to `GET ?crc_token=…`: `sha256=` followed by the base64
 * HMAC-SHA256 of the token, keyed by the app's consumer secret.
 */
export function xCrcResponse(secret: string, crcToken: string): { response_token: string } {
  return { response_token: `sha256=${createHmac('sha256', secret).update(crcToken).digest('base64')}` };
}
