import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors.js';
import { bearerToken, tokenMatches } from '../auth/token.js';

/** An `onRequest` hook that lets through only requests that carry the API token. */
export function requireToken(token: string) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const presented = bearerToken(request.headers.authorization);
    if (!tokenMatches(token, presented)) {
      throw new ProblemError('unauthorized', 'Send the API token as "Authorization: Bearer <token>".');
    }
  };
}
