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
    if (params.get('hub.verify_token') !== rule.handshake?.verifyToken) {
      return { status: 403, contentType: '', body: '', refused: 'The hub.verify_token does not match this source\'s verifyToken.' };
    }
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: challenge };
  }
  if (type === 'x') {
    const token = params.get('crc_token');
    if (token !== null && rule.handshakeSecret !== undefined) {
      return { status: 200, contentType: 'application/json', body: JSON.stringify(xCrcResponse(rule.handshakeSecret, token)) };
    }
  }
  return undefined;
}

/**
 * Handshakes that arrive as a signed POST body: Slack's `url_verification`
 * and Zoom's `endpoint.url_validation`. The caller checks the signature first.
 */
export function bodyHandshake(rule: SourceRule, body: unknown): HandshakeReply | undefined {
  const type = rule.handshake?.type;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields = body as Record<string, unknown>;
  if (type === 'slack' && fields.type === 'url_verification' && typeof fields.challenge === 'string') {
    return { status: 200, contentType: 'application/json', body: JSON.stringify({ challenge: fields.challenge }) };
  }
  if (type === 'zoom' && fields.event === 'endpoint.url_validation' && rule.handshakeSecret !== undefined) {
    const payload = fields.payload as Record<string, unknown> | undefined;
    if (typeof payload?.plainToken === 'string') {
      return { status: 200, contentType: 'application/json', body: JSON.stringify(zoomUrlValidation(rule.handshakeSecret, payload.plainToken)) };
    }
  }
  return undefined;
}
