import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError, problemFor } from '../errors.js';
import { isAuthorized, unauthorized } from './auth.js';

/**
 * The router's own refusals (Fastify's `frameworkErrors`): a path with a bad
 * percent-escape (`FST_ERR_BAD_URL`) or a parameter longer than the router
 * takes (`FST_ERR_MAX_PARAM_LENGTH`). Such a path names no route and no
 * delivery, so it is answered as any unknown one, `404 not_found`, as a
 * problem; under `/api/` a request without the token gets `401` first, as
 * on every route there. `logRequest` writes the request's log line and
 * metrics, which Fastify's hooks do not run for these.
 */
export function createFrameworkErrorHandler(
  token: string,
  logRequest: (request: FastifyRequest, reply: FastifyReply) => void,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (_error, request, reply) => {
    const path = (request.raw.url ?? '').split('?')[0] ?? '';
    const refusal = path.startsWith('/api/') && !isAuthorized(request, token)
      ? unauthorized()
      : new ProblemError('not_found', `There is no ${request.method} ${printable(path)} here.`);
    const problem = problemFor(refusal.code, refusal.message);
    void reply.headers(refusal.headers).code(problem.status).type('application/problem+json; charset=utf-8').send(problem);
    logRequest(request, reply);
  };
}

/** The path as the problem's detail shows it: at most 200 characters, control characters escaped. */
function printable(path: string): string {
  const short = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  return JSON.stringify(short).slice(1, -1);
}
