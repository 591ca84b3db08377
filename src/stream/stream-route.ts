import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { StreamHub } from './stream-hub.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { DIGITS, sourceFilter } from '../platform/http/query-params.js';
import { ProblemSchema } from '../api/schemas.js';

export interface StreamRouteOptions {
  hub: StreamHub;
  guard: TokenGuard;
}

const StreamQuerySchema = Type.Object({
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  after: Type.Optional(
    Type.String({
      pattern: DIGITS,
      description: 'Resume after this seq: a whole number, in digits (for clients that cannot set Last-Event-ID).',
    }),
  ),
});

const SEQ = new RegExp(DIGITS);

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/**
 * `GET /api/stream` (CONTRACT 3): Server-Sent Events, one `delivery` event
 * per delivery with its seq as `id`. Starts after `Last-Event-ID`, else
 * after `?after=`, else at the present.
 */
export const streamRoute: FastifyPluginAsyncTypebox<StreamRouteOptions> = async (app, { hub, guard }) => {
  app.addHook('onRequest', guard.requireToken);
  app.get(
    '/api/stream',
    {
      schema: {
        querystring: StreamQuerySchema,
        response: {
          // For the document only: the reply is hijacked and written as events, never serialized.
          200: Type.Unsafe<never>({
            description: 'One `delivery` event per delivery: `id` its seq, `data` the Delivery JSON; a comment as heartbeat',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          }),
          400: ProblemSchema,
          401: ProblemSchema,
          429: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const source = sourceFilter(request.query.source);
      const lastEventId = request.headers['last-event-id'];
      let afterSeq: number;
      if (typeof lastEventId === 'string' && lastEventId.trim() !== '') {
        if (!SEQ.test(lastEventId.trim())) {
          throw new ProblemError('invalid_query', 'Last-Event-ID must be the seq of a delivery event.');
        }
        afterSeq = Number(lastEventId.trim());
      } else {
        afterSeq = request.query.after === undefined ? await hub.options.store.latestSeq() : Number(request.query.after);
      }
      reply.hijack();
      const res = reply.raw;
      if (request.method === 'HEAD') {
        // Fastify routes HEAD here: the headers a GET would have, and no stream
        // (Node sends no body for HEAD, so a stream would never even start).
        res.writeHead(200, STREAM_HEADERS).end();
        return;
      }
      // A reader that vanished without a word (a laptop asleep, a dropped
      // network) is noticed by TCP rather than kept for ever.
      res.socket?.setKeepAlive(true, 30_000);
      // A reader that closes its side has left: the front door answers
      // senders that half-close (answerHalfClosedSenders), which for an
      // endless stream would keep it for a client that is gone.
      res.socket?.once('end', () => res.destroy());
      res.writeHead(200, { ...STREAM_HEADERS, connection: 'keep-alive' });
      const started = Date.now();
      hub.open(res, {
        afterSeq,
        ...(source === undefined ? {} : { source }),
        onEnd: (reason) =>
          request.log.info(
            {
              req: { method: 'GET', path: '/api/stream' },
              reason,
              seconds: (Date.now() - started) / 1000,
            },
            'stream ended',
          ),
      });
    },
  );
};
