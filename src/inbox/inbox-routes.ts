import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { StoredDelivery } from '../deliveries/delivery-store.js';
import type { InboxDatabase } from './inbox-database.js';
import { narrows, type DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { sourceFilter } from '../platform/http/query-params.js';
import { deliveryFilter, FILTER_PARAMS } from '../search/filter-params.js';
import { sparklines } from '../traffic/traffic-series.js';
import { decodeCursor, decodeNameCursor, encodeCursor, encodeNameCursor } from '../platform/http/cursor.js';
import { deliveryJson, deliveryPageText, deliveryText } from '../deliveries/delivery-json.js';
import { deliveryOrNotFound, noDeliveryProblem } from '../deliveries/delivery-ref.js';
import {
  CountSchema,
  DeletedSchema,
  DeleteQuerySchema,
  DeliveryPageSchema,
  DeliverySchema,
  EventTypeListSchema,
  EventTypeQuerySchema,
  MAX_COUNT,
  MAX_EVENT_TYPES,
  DeliveryRefParamsSchema,
  ListQuerySchema,
  MAX_PAGE,
  MAX_SOURCE_PAGE,
  PAGE_BYTES,
  ProblemSchema,
  SOURCE_PAGE,
  SourceListSchema,
  SourceQuerySchema,
} from '../api/schemas.js';

export interface InboxRoutesOptions {
  store: InboxDatabase;
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
      const filter = deliveryFilter(request.query);
      const beforeSeq = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor);
      const rows = await store.list({
        ...filter,
        limit: limit + 1,
        maxBytes: PAGE_BYTES,
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
            last !== undefined && (await moreAfter(store, rows, limit, last.seq, filter)) ? encodeCursor(last.seq) : null,
        });
    },
  );

  // Deletes what the filters match (CONTRACT 8), a batch of DELETE_BATCH per
  // transaction so that receiving never waits long; deliveries that arrive
  // meanwhile are not deleted (only seqs below the newest at the start).
  app.delete(
    '/api/deliveries',
    {
      schema: { querystring: DeleteQuerySchema, response: { 200: DeletedSchema, ...errors } },
    },
    async (request) => {
      refuseUnknownParams(request.url);
      const filter = deliveryFilter(request.query);
      if (!narrows(filter)) {
        throw new ProblemError(
          'invalid_query',
          `A delete by filter needs at least one filter (${FILTER_PARAMS.join(', ')}); to delete one delivery, DELETE /api/deliveries/{id}.`,
        );
      }
      let beforeSeq = (await store.latestSeq()) + 1;
      let deleted = 0;
      for (;;) {
        const batch = await store.deleteMatching(filter, beforeSeq, DELETE_BATCH);
        deleted += batch.deleted;
        if (batch.deleted < DELETE_BATCH || batch.lowestSeq === undefined) break;
        beforeSeq = batch.lowestSeq;
        await new Promise((resolve) => setImmediate(resolve));
      }
      return { deleted };
    },
  );

  app.get(
    '/api/event-types',
    {
      schema: { querystring: EventTypeQuerySchema, response: { 200: EventTypeListSchema, ...errors } },
    },
    async (request) => {
      const source = sourceFilter(request.query.source);
      const limit = Math.min(Number(request.query.limit ?? MAX_EVENT_TYPES), MAX_EVENT_TYPES);
      const rows = await store.eventTypes({ limit, ...(source === undefined ? {} : { source }) });
      return {
        items: rows.map((row) => ({
          source: row.source,
          eventType: row.eventType,
          count: row.count,
          lastReceivedAt: new Date(row.lastReceivedAt).toISOString(),
        })),
      };
    },
  );

  // How many a filter matches, for the page's "delete the n that match?" (a
  // static route: it wins over /api/deliveries/:id, and no id is "count").
  app.get(
    '/api/deliveries/count',
    {
      schema: { querystring: DeleteQuerySchema, response: { 200: CountSchema, ...errors } },
    },
    async (request) => {
      const count = await store.countMatching(deliveryFilter(request.query), MAX_COUNT);
      return { count, atLeast: count >= MAX_COUNT };
    },
  );

  app.get(
    '/api/deliveries/:id',
    {
      schema: { params: DeliveryRefParamsSchema, response: { 200: DeliverySchema, ...errors } },
    },
    async (request, reply) => {
      const delivery = await deliveryOrNotFound(store, request.params.id);
      return reply.type(JSON_TYPE).serializer(deliveryText).send(deliveryJson(delivery));
    },
  );

  app.get(
    '/api/deliveries/:id/raw',
    {
      schema: {
        params: DeliveryRefParamsSchema,
        response: {
          // For the document only: a Buffer is sent as it is, never serialized.
          200: Type.Unsafe<Buffer>({
            description: 'The body bytes exactly as received, with the Content-Type they came with',
            content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const delivery = await deliveryOrNotFound(store, request.params.id);
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
      schema: { params: DeliveryRefParamsSchema, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      const delivery = await deliveryOrNotFound(store, request.params.id);
      if (!(await store.delete(delivery.id))) throw noDeliveryProblem(request.params.id);
      return reply.code(204).send(null);
    },
  );

  // A page at a time, by name: 50,000 sources made one answer of 8.9 MB
  // (docs/reading.md). Without `limit` the first 100 come, with `nextCursor`.
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
  store: InboxDatabase,
  rows: readonly StoredDelivery[],
  limit: number,
  lastSeq: number,
  filter: DeliveryFilter,
): Promise<boolean> {
  if (rows.length > limit) return true;
  if (rows.reduce((bytes, d) => bytes + d.raw.length, 0) < PAGE_BYTES) return false;
  const next = await store.list({ ...filter, limit: 1, beforeSeq: lastSeq });
  return next.length > 0;
}

/** Deliveries deleted per transaction by a delete by filter. */
const DELETE_BATCH = 500;

/**
 * A delete by filter takes its filters and nothing else: a misspelt filter
 * (`evenType=…`) beside a right one would otherwise delete far more than
 * meant. (The schema cannot say so: Fastify drops unknown parameters.)
 */
function refuseUnknownParams(url: string): void {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  for (const name of new URLSearchParams(query).keys()) {
    if (!(FILTER_PARAMS as readonly string[]).includes(name)) {
      throw new ProblemError(
        'invalid_query',
        `A delete by filter takes only ${FILTER_PARAMS.join(', ')}; "${name.slice(0, 100)}" is none of them.`,
      );
    }
  }
}
