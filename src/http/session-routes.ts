import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tokenMatches } from '../auth/token.js';
import { ProblemError } from '../errors.js';
import type { TrustedProxies } from '../receive/remote-address.js';
import { reachedOverHttps, SESSION_COOKIE, sessionValue } from './auth.js';
import { ProblemSchema } from './schemas.js';

export interface SessionRoutesOptions {
  token: string;
  /** The proxies whose `X-Forwarded-Proto` is believed (RECEPTION_TRUSTED_PROXIES). */
  proxies: TrustedProxies;
}

/**
 * Log in and out of the web page: the token is exchanged for an HttpOnly,
 * SameSite=Strict cookie, `Secure` when the browser came over https.
 */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRoutesOptions> = async (app, { token, proxies }) => {
  app.post('/api/session', {
    schema: {
      body: Type.Object({ token: Type.String({ maxLength: 1024 }) }),
      response: { 204: Type.Null(), 400: ProblemSchema, 401: ProblemSchema },
    },
  }, async (request, reply) => {
    if (!tokenMatches(token, request.body.token)) {
      throw new ProblemError('unauthorized', 'That is not the API token; find it in the data directory or RECEPTION_TOKEN.');
    }
    const secure = reachedOverHttps(request, proxies) ? '; Secure' : '';
    return reply
      .header('set-cookie', `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000${secure}`)
      .code(204)
      .send(null);
  });

  app.delete('/api/session', { schema: { response: { 204: Type.Null() } } }, async (request, reply) => reply
    .header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${reachedOverHttps(request, proxies) ? '; Secure' : ''}`)
    .code(204)
    .send(null));
};
