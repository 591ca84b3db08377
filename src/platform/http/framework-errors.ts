import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors/problem-catalogue.js';
import type { TokenGuard } from './auth.js';
import type { RequestLog } from './request-log.js';
import { sendProblem } from './error-handler.js';

/** The routes whose parameter (a delivery id) the router may refuse: `/api/deliveries/:id` and `…/raw`. */
const DELIVERY_ID_ROUTES = '/api/deliveries/';

/**
 * The router's own refusals (Fastify's `frameworkErrors`): a path with a bad
 * percent-escape (`FST_ERR_BAD_URL`) or a parameter longer than the router
 * takes (`FST_ERR_MAX_PARAM_LENGTH`). Such a path names no delivery, or no
 * route at all, so it is answered as any unknown one, `404 not_found`, as a
 * problem. The one exception: an id on `/api/deliveries/` that the router
 * refuses is still a request to the deliveries routes, which check the
 * token before anything else, so without it the answer is `401` (or `429`
 * for a throttled address), as for any other id there. `logRequest` writes the request's log line and
 * metrics, which Fastify's hooks do not run for these.
 */
export function createFrameworkErrorHandler(
  guard: TokenGuard,
  logRequest: RequestLog,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (_error, request, reply) => {
    const path = (request.raw.url ?? '').split('?')[0] ?? '';
    const refusal =
      (path.startsWith(DELIVERY_ID_ROUTES) ? guard.refusal(request) : undefined) ??
      new ProblemError('not_found', `There is no ${request.method} ${printable(path)} here.`);
    sendProblem(reply, refusal.code, refusal.message, refusal.headers);
    logRequest(request, reply);
  };
}

/** The path as the problem's detail shows it: at most 200 characters, control characters escaped. */
function printable(path: string): string {
  const short = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  return JSON.stringify(short).slice(1, -1);
}
