import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tokenMatches } from '../platform/auth/token.js';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { reachedOverHttps, SESSION_COOKIE, sessionValue, type TokenGuard } from '../platform/http/auth.js';
import { ProblemSchema } from '../api/schemas.js';

export interface SessionRoutesOptions {
  /** The token, the throttle of wrong ones, and the proxies whose `X-Forwarded-Proto` is believed. */
  guard: TokenGuard;
}

/**
 * Log in and out of the web page: the token is exchanged for an HttpOnly,
 * SameSite=Strict cookie, `Secure` when the browser came over https.
 */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRoutesOptions> = async (app, { guard }) => {
  const { token, proxies } = guard;
  app.post(
    '/api/session',
    {
      schema: {
        body: Type.Object({ token: Type.String({ maxLength: 1024 }) }),
        response: { 204: Type.Null(), 400: ProblemSchema, 401: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request, reply) => {
      if (!tokenMatches(token, request.body.token)) {
        throw guard.wrongToken(
          request,
          new ProblemError('unauthorized', 'That is not the API token; find it in the data directory or RECEPTION_TOKEN.'),
        );
      }
      const secure = reachedOverHttps(request, proxies) ? '; Secure' : '';
      return reply
        .header(
          'set-cookie',
          `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000${secure}`,
        )
        .code(204)
        .send(null);
    },
  );

  app.delete('/api/session', { schema: { response: { 204: Type.Null() } } }, async (request, reply) =>
    reply
      .header(
        'set-cookie',
        `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${reachedOverHttps(request, proxies) ? '; Secure' : ''}`,
      )
      .code(204)
      .send(null),
  );
};
