import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors.js';
import { bearerToken, tokenMatches } from '../auth/token.js';
import { forwardedHttps, type TrustedProxies } from '../receive/remote-address.js';

export const SESSION_COOKIE = 'reception_session';

/**
 * The value of the web page's session cookie: derived from the token, so
 * that the token itself never sits in a cookie and changing the token ends
 * every session.
 */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('reception-session-v1').digest('base64url');
}

/**
 * Whether the browser reached Reception over https, so that the session
 * cookie gets `Secure`: through a TLS proxy in RECEPTION_TRUSTED_PROXIES
 * that says so (`X-Forwarded-Proto`). `request.protocol` covers a TLS
 * socket of Reception's own, which it does not have today: it listens on
 * plain http only (app.ts), and Fastify's `trustProxy` is off, so that
 * `protocol` never reads a header.
 */
export function reachedOverHttps(request: FastifyRequest, proxies: TrustedProxies): boolean {
  return request.protocol === 'https'
    || forwardedHttps(request.raw.socket.remoteAddress, request.headers['x-forwarded-proto'], proxies);
}

/** The value of one cookie from a `Cookie` header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    if (part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return undefined;
}

/** True when the request carries the API token, or the web page's session cookie. */
export function isAuthorized(request: FastifyRequest, token: string): boolean {
  const presented = bearerToken(request.headers.authorization);
  if (presented !== undefined) return tokenMatches(token, presented);
  const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
  return cookie !== undefined && tokenMatches(sessionValue(token), cookie);
}

/** The refusal of a request without the token: `401 unauthorized`, with the scheme to use (RFC 9110). */
export function unauthorized(): ProblemError {
  return new ProblemError('unauthorized', 'Send the API token as "Authorization: Bearer <token>".', { 'www-authenticate': 'Bearer' });
}

/** An `onRequest` hook that lets through only requests that carry the API token. */
export function requireToken(token: string) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (!isAuthorized(request, token)) throw unauthorized();
  };
}
