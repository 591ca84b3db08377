import { sameSecretText } from '../platform/auth/same-secret.js';
import { xCrcResponse, zoomUrlValidation } from '../verify/handshakes.js';
import type { SourceRule } from './source-rules.js';

/** A handshake's answer: sent as is, never stored. */
export interface HandshakeReply {
  status: number;
  contentType: string;
  body: string;
  /** Set when the handshake was refused (`handshake_failed`). */
  refused?: string;
}

/**
 * Handshakes that arrive in the query string (CONTRACT 4): Meta's
 * `hub.challenge` (GET), X's `crc_token` (GET) and Microsoft Graph's
 * `validationToken` (any method). Undefined when this request is not one.
 */
export function queryHandshake(rule: SourceRule, method: string, query: string): HandshakeReply | undefined {
  const type = rule.handshake?.type;
  if (type === undefined || query === '') return undefined;
  const params = new URLSearchParams(query);
  if (type === 'graph') {
    const token = params.get('validationToken');
    if (token !== null) return { status: 200, contentType: 'text/plain; charset=utf-8', body: token };
  }
  if (method !== 'GET') return undefined;
  if (type === 'meta' && params.get('hub.mode') === 'subscribe') {
    const challenge = params.get('hub.challenge') ?? '';
    const expected = rule.handshake?.verifyToken;
    const given = params.get('hub.verify_token');
    if (expected === undefined || given === null || !sameSecretText(given, expected)) {
      return {
        status: 403,
        contentType: '',
        body: '',
        refused: "The hub.verify_token does not match this source's verifyToken.",
      };
    }
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: challenge };
  }
  const secret = rule.handshakeSecrets?.[0];
  if (type === 'x' && secret !== undefined) {
    const token = params.get('crc_token');
    if (token !== null) {
      return { status: 200, contentType: 'application/json', body: JSON.stringify(xCrcResponse(secret, token)) };
    }
  }
  return undefined;
}

/**
 * Handshakes that arrive as a signed POST body: Slack's `url_verification`
 * and Zoom's `endpoint.url_validation`. The caller checks the signature first
 * and passes the index of the verify secret that matched: during a rotation,
 * Zoom expects the answer keyed by the secret it signed with. The body's
 * value is asked for (`bodyValue`) only on a source with such a handshake.
 */
export function bodyHandshake(rule: SourceRule, bodyValue: () => unknown, secretIndex = 0): HandshakeReply | undefined {
  const type = rule.handshake?.type;
  if (type !== 'slack' && type !== 'zoom') return undefined;
  const body = bodyValue();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields = body as Record<string, unknown>;
  if (type === 'slack' && fields.type === 'url_verification' && typeof fields.challenge === 'string') {
    return { status: 200, contentType: 'application/json', body: JSON.stringify({ challenge: fields.challenge }) };
  }
  const secrets = rule.handshakeSecrets ?? [];
  // A handshake secret of its own is the only one; else the zoom scheme's secret that matched.
  const secret = secrets.length === 1 ? secrets[0] : secrets[secretIndex];
  if (type === 'zoom' && fields.event === 'endpoint.url_validation' && secret !== undefined) {
    const payload = fields.payload as Record<string, unknown> | undefined;
    if (typeof payload?.plainToken === 'string') {
      return {
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify(zoomUrlValidation(secret, payload.plainToken)),
      };
    }
  }
  return undefined;
}
