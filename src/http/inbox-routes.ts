import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemError } from '../errors/problem-catalogue.js';
import type { InboxStore, StoredDelivery } from '../store/inbox-store.js';
import type { TokenGuard } from './auth.js';
import { sourceFilter } from './query-params.js';
import { sparklines } from './traffic-series.js';
import { decodeCursor, decodeNameCursor, encodeCursor, encodeNameCursor } from './cursor.js';
import { deliveryJson, deliveryPageText, deliveryText } from './delivery-json.js';
import {
  DeliveryPageSchema,
  DeliverySchema,
  IdParamsSchema,
  ListQuerySchema,
  MAX_PAGE,
  MAX_SOURCE_PAGE,
  PAGE_BYTES,
  ProblemSchema,
  SOURCE_PAGE,
  SourceListSchema,
  SourceQuerySchema,
} from './schemas.js';

export interface InboxRoutesOptions {
  store: InboxStore;
  guard: TokenGuard;
}

/** A custom serializer sets no Content-Type of its own. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Reading the inbox (CONTRACT 3): every route needs the API token. A
 * delivery is serialized by `deliveryText`, which writes a JSON body as the
 * sender's text; the schemas still type the handlers and describe the answers.
 */
export const inboxRoutes: FastifyPluginAsyncTypebox<InboxRoutesOptions> = async (app, { store, guard }) => {
  app.addHook('onRequest', guard.requireToken);
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };

  app.get(
    '/api/deliveries',
    {
      schema: { querystring: ListQuerySchema, response: { 200: DeliveryPageSchema, ...errors } },
    },
    async (request, reply) => {
      const limit = Math.min(Number(request.query.limit ?? '50'), MAX_PAGE);
      const source = sourceFilter(request.query.source);
      const beforeSeq = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor);
      const rows = await store.list({
        limit: limit + 1,
        maxBytes: PAGE_BYTES,
        ...(source === undefined ? {} : { source }),
        ...(beforeSeq === undefined ? {} : { beforeSeq }),
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return reply
        .type(JSON_TYPE)
        .serializer(deliveryPageText)
        .send({
          items: page.map(deliveryJson),
          nextCursor:
            last !== undefined && (await moreAfter(store, rows, limit, last.seq, source)) ? encodeCursor(last.seq) : null,
        });
    },
  );

  app.get(
    '/api/deliveries/:id',
    {
      schema: { params: IdParamsSchema, response: { 200: DeliverySchema, ...errors } },
    },
    async (request, reply) => {
      const delivery = await store.get(request.params.id);
      if (delivery === undefined) throw notFound(request.params.id);
      return reply.type(JSON_TYPE).serializer(deliveryText).send(deliveryJson(delivery));
    },
  );

  app.get(
    '/api/deliveries/:id/raw',
    {
      schema: { params: IdParamsSchema },
    },
    async (request, reply) => {
      const delivery = await store.get(request.params.id);
      if (delivery === undefined) throw notFound(request.params.id);
      return reply
        .header('content-type', delivery.contentType || 'application/octet-stream')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('content-disposition', `attachment; filename="${delivery.id}.body"`)
        .send(delivery.raw);
    },
  );

  app.delete(
    '/api/deliveries/:id',
    {
      schema: { params: IdParamsSchema, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      if (!(await store.delete(request.params.id))) throw notFound(request.params.id);
      return reply.code(204).send(null);
    },
  );

  // A page at a time, by name: 50,000 sources made one answer of 8.9 MB
  // (issue 16). Without `limit` the first 100 come, with `nextCursor`.
  app.get(
    '/api/sources',
    {
      schema: { querystring: SourceQuerySchema, response: { 200: SourceListSchema, ...errors } },
    },
    async (request) => {
      const limit = Math.min(Number(request.query.limit ?? SOURCE_PAGE), MAX_SOURCE_PAGE);
      const after = request.query.cursor === undefined ? undefined : decodeNameCursor(request.query.cursor);
      const search = request.query.q === undefined || request.query.q === '' ? undefined : request.query.q;
      const rows = await store.sources({
        limit: limit + 1,
        ...(after === undefined ? {} : { after }),
        ...(search === undefined ? {} : { search }),
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      // With traffic=24h, the page's sparklines in one query of the traffic counts.
      const traffic =
        request.query.traffic === undefined
          ? undefined
          : await sparklines(
              store.traffic,
              page.map((s) => s.source),
              Date.now(),
            );
      return {
        items: page.map((s) => {
          const spark = traffic?.get(s.source);
          return {
            source: s.source,
            count: s.count,
            lastReceivedAt: new Date(s.lastReceivedAt).toISOString(),
            ...(spark === undefined ? {} : { traffic: spark }),
          };
        }),
        nextCursor: rows.length > limit && last !== undefined ? encodeNameCursor(last.source) : null,
      };
    },
  );
};

/**
 * Whether the inbox goes on below the page: the lookahead row came back, or
 * the page stopped at PAGE_BYTES and one more delivery is there (asked for
 * only then, so that the last page of large bodies gets a null cursor, not
 * one that leads to an empty page).
 */
async function moreAfter(
  store: InboxStore,
  rows: readonly StoredDelivery[],
  limit: number,
  lastSeq: number,
  source: string | undefined,
): Promise<boolean> {
  if (rows.length > limit) return true;
  if (rows.reduce((bytes, d) => bytes + d.raw.length, 0) < PAGE_BYTES) return false;
  const next = await store.list({ limit: 1, beforeSeq: lastSeq, ...(source === undefined ? {} : { source }) });
  return next.length > 0;
}

function notFound(id: string): ProblemError {
  return new ProblemError('not_found', `No delivery has the id "${id.slice(0, 100)}".`);
}
