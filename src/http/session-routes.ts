import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tokenMatches } from '../auth/token.js';
import { ProblemError } from '../errors.js';
import { SESSION_COOKIE, sessionValue } from './auth.js';
import { ProblemSchema } from './schemas.js';

/** Log in and out of the web page: the token is exchanged for an HttpOnly, SameSite=Strict cookie. */
export const sessionRoutes: FastifyPluginAsyncTypebox<{ token: string }> = async (app, { token }) => {
  app.post('/api/session', {
    schema: {
      body: Type.Object({ token: Type.String({ maxLength: 1024 }) }),
      response: { 204: Type.Null(), 400: ProblemSchema, 401: ProblemSchema },
    },
  }, async (request, reply) => {
    if (!tokenMatches(token, request.body.token)) {
      throw new ProblemError('unauthorized', 'That is not the API token; find it in the data directory or RECEPTION_TOKEN.');
    }
    const secure = request.protocol === 'https' ? '; Secure' : '';
    return reply
      .header('set-cookie', `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000${secure}`)
      .code(204)
      .send(null);
  });

  app.delete('/api/session', { schema: { response: { 204: Type.Null() } } }, async (_request, reply) => reply
    .header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`)
    .code(204)
    .send(null));
};
