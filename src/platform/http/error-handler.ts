import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemFor, type ProblemCode } from '../errors/problem-catalogue.js';
import { StoreUnavailableError } from '../db/store-errors.js';

const BY_STATUS: Record<number, ProblemCode> = {
  400: 'invalid_query',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  503: 'storage_unavailable',
};

/**
 * Every error leaves as `application/problem+json` with a catalogue code;
 * 5xx answers never carry a message, stack or path from inside.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ProblemError, request, reply) => {
    let code: ProblemCode;
    let detail: string;
    if (error instanceof ProblemError) {
      code = error.code;
      detail = error.message;
      void reply.headers(error.headers);
    } else if (error instanceof StoreUnavailableError) {
      // The database is down or restarting (PostgreSQL): the client should retry, as senders do.
      code = 'storage_unavailable';
      detail = 'The inbox is unavailable right now; retry later.';
      void reply.header('retry-after', '5');
      request.log.warn(
        { err: error.message, req: { method: request.method, url: request.routeOptions.url } },
        'store unavailable',
      );
    } else if (error.validation !== undefined) {
      // The request's body (the login's JSON) is not a query: a client is told which part to fix.
      code = error.validationContext === 'body' ? 'invalid_body' : 'invalid_query';
      detail = validationDetail(error, request);
    } else if (error.statusCode !== undefined && error.statusCode < 500) {
      // Fastify's content-type parser (FST_ERR_CTP_…) refuses bodies: a Content-Length that does not match, say.
      code =
        error.statusCode === 400 && error.code.startsWith('FST_ERR_CTP_')
          ? 'invalid_body'
          : (BY_STATUS[error.statusCode] ?? 'invalid_query');
      detail = error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? notJsonDetail(request) : error.message;
    } else {
      code = 'internal_error';
      detail = 'Something went wrong inside Reception; the error is in its log.';
      request.log.error({ err: error, req: { method: request.method, url: request.routeOptions.url } }, 'request failed');
    }
    sendProblem(reply, code, detail);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // The commonest slips of a sender's URL: /api/webhooks/…, /webhook/…, /api/webhook with no source.
    const hint = /webhook/i.test(path) ? ' Webhooks are sent as POST /api/webhook/{source}.' : '';
    sendProblem(reply, 'not_found', `There is no ${request.method} ${path} here.${hint}`);
  });
}

/**
 * Answers a Fastify request with a problem: the one way Fastify's side
 * writes one (the raw front door has its own, edge/write-problem.ts).
 * `headers`: extra response headers, such as `WWW-Authenticate`.
 */
export function sendProblem(
  reply: FastifyReply,
  code: ProblemCode,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const problem = problemFor(code, detail);
  // Its own serializer: a route's custom one (a delivery page, a claim) may
  // be the very thing that threw, and would throw again on the problem,
  // leaving Fastify's fallback body with the internal message.
  void reply.headers(headers).code(problem.status).type(PROBLEM_CONTENT_TYPE).serializer(problemText).send(problem);
}

function problemText(problem: unknown): string {
  return JSON.stringify(problem);
}

/**
 * A body the API cannot read (its routes take JSON; the webhook route has its
 * own parsing): what to send instead. curl's `-d` says
 * `application/x-www-form-urlencoded` unless told otherwise.
 */
function notJsonDetail(request: FastifyRequest): string {
  const type = request.headers['content-type'];
  const said =
    type === undefined || type.trim() === ''
      ? 'the request has no Content-Type'
      : `its Content-Type is "${type.split(';')[0]?.trim().slice(0, 100) ?? ''}"${/x-www-form-urlencoded/i.test(type) ? " (curl's default for -d)" : ''}`;
  return `This API reads JSON bodies, and ${said}: send the body as JSON with Content-Type: application/json (with curl: -H 'content-type: application/json').`;
}

const PLACES: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
  body: 'field',
};

/**
 * What a request that the route's schema refused got wrong: the parameter
 * and what it takes, in the words of the schema's own description (the one
 * that the OpenAPI document shows); the validator's message where the
 * schema describes nothing. The value sent is never repeated.
 */
function validationDetail(error: FastifyError, request: FastifyRequest): string {
  const first = error.validation?.[0];
  const context = error.validationContext ?? 'request';
  const name = first?.instancePath.split('/')[1];
  const schema = (
    request.routeOptions.schema as Record<string, { properties?: Record<string, { description?: unknown }> }> | undefined
  )?.[context];
  const description = name === undefined ? undefined : schema?.properties?.[name]?.description;
  if (typeof description === 'string') return `The ${PLACES[context] ?? context} "${name}" is not valid: ${description}`;
  const place = context === 'body' ? 'The request body' : context;
  return `${place} ${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`.replace(/\s+/g, ' ').trim();
}
