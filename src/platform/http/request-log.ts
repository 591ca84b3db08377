import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../observe/logger.js';
import type { Metrics } from '../observe/metrics.js';

/** Writes one log line and the latency metric for a request Fastify answered. */
export type RequestLog = (request: FastifyRequest, reply: FastifyReply) => void;

/** One log line and the latency metric per Fastify request (the webhook route, in edge/, writes its own). */
export function createRequestLog(logger: Logger, metrics: Metrics): RequestLog {
  return (request, reply) => {
    const seconds = reply.elapsedTime / 1000;
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(route, request.method, reply.statusCode, seconds);
    // The root logger, not request.log: Fastify's `req` serializer would drop `path` and `remoteAddress`.
    logger.info(
      {
        reqId: request.id,
        req: { method: request.method, path: request.url.split('?')[0], remoteAddress: request.ip },
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 1000) / 1000,
      },
      'request',
    );
  };
}
