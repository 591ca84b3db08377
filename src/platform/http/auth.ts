import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors/problem-catalogue.js';
import { bearerToken, tokenMatches } from '../auth/token.js';
import type { WrongTokenThrottle } from '../auth/wrong-token-throttle.js';
import { clientAddress, forwardedHttps, type TrustedProxies } from './remote-address.js';

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
  return (
    request.protocol === 'https' ||
    forwardedHttps(request.raw.socket.remoteAddress, request.headers['x-forwarded-proto'], proxies)
  );
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

/**
 * What a request presents: the right token (as Bearer or the session
 * cookie), a wrong one, or none at all, with how it presented it, so that
 * the refusal can say which.
 */
export type Credential = 'right' | 'wrong-bearer' | 'wrong-cookie' | 'not-bearer' | 'none';

function credentialOf(request: FastifyRequest, token: string): Credential {
  const header = request.headers.authorization;
  const presented = bearerToken(header);
  if (presented !== undefined) return tokenMatches(token, presented) ? 'right' : 'wrong-bearer';
  const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (cookie !== undefined) return tokenMatches(sessionValue(token), cookie) ? 'right' : 'wrong-cookie';
  return header === undefined || header.trim() === '' ? 'none' : 'not-bearer';
}

const SEND_IT = 'send it as "Authorization: Bearer <token>"';
const WHERE_IT_IS = 'RECEPTION_TOKEN, or the file "token" in its data directory';

/** The detail of each refusal: a missing token and a wrong one are told apart (never what the right one is). */
const REFUSALS: Record<Exclude<Credential, 'right'>, string> = {
  none: `No API token was sent: ${SEND_IT} (the server's token is ${WHERE_IT_IS}).`,
  'not-bearer': `The Authorization header does not carry a Bearer token: ${SEND_IT}.`,
  'wrong-bearer': `The API token is wrong: it is not this server's token (${WHERE_IT_IS}).`,
  'wrong-cookie': 'The session cookie is not valid (the API token changed, or it is from another server): log in again.',
};

/** The refusal of a request without the right token: `401 unauthorized`, with the scheme to use (RFC 9110). */
export function unauthorized(credential: Exclude<Credential, 'right'> = 'none'): ProblemError {
  return new ProblemError('unauthorized', REFUSALS[credential], { 'www-authenticate': 'Bearer' });
}

/**
 * The API token's checks, on every route that needs it and on the login. A
 * wrong token (Bearer, session cookie, or the login's) counts against the
 * client's address (WrongTokenThrottle); a request that presents none does
 * not, so that the web page asking whether it is logged in costs nothing.
 * A session cookie is counted too: its value is computed from the token, so
 * wrong ones would otherwise be a way to try tokens unthrottled.
 */
export class TokenGuard {
  constructor(
    readonly token: string,
    readonly proxies: TrustedProxies,
    private readonly throttle: WrongTokenThrottle,
  ) {}

  /** Undefined when the request carries the right token; else its refusal (401, or 429 for a throttled address). */
  refusal(request: FastifyRequest): ProblemError | undefined {
    const credential = credentialOf(request, this.token);
    if (credential === 'right') return undefined;
    if (credential === 'none' || credential === 'not-bearer') return unauthorized(credential);
    return this.wrongToken(request, unauthorized(credential));
  }

  /** `refusal`'s answer to a wrong token: `refusal` itself, or `429 rate_limited` once the address is throttled. */
  wrongToken(request: FastifyRequest, refusal: ProblemError): ProblemError {
    const address = clientAddress(request.raw.socket.remoteAddress, request.headers['x-forwarded-for'], this.proxies);
    const waitSeconds = this.throttle.wrongToken(address);
    if (waitSeconds === 0) return refusal;
    return new ProblemError(
      'rate_limited',
      `Too many wrong tokens from this address: wait ${waitSeconds} s before the next try; each wrong token doubles the wait. The right token is accepted at any time.`,
      { 'retry-after': String(waitSeconds) },
    );
  }

  /** An `onRequest` hook that lets through only requests that carry the API token. */
  readonly requireToken = async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const refusal = this.refusal(request);
    if (refusal !== undefined) throw refusal;
  };
}
