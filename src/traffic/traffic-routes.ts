import type { TrafficStore } from './traffic.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkSourceName } from '../platform/http/source-name.js';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { IdParamsSchema, ProblemSchema } from '../api/schemas.js';
import { seriesOf, spanEnd, spanEndingAt } from './traffic-series.js';
import { TRAFFIC_BUCKETS, TRAFFIC_RANGES, TrafficQuerySchema, TrafficSchema } from '../api/traffic-schemas.js';
import { Type } from 'typebox';

export interface TrafficRoutesOptions {
  store: TrafficStore;
  guard: TokenGuard;
}

const SourceParamsSchema = Type.Object({ source: IdParamsSchema.properties.id });

/**
 * `GET /api/sources/{source}/traffic?range=&bucket=`: a source's deliveries,
 * refusals and forward outcomes, bucket by bucket up to now, from the counts
 * the store keeps per minute (README, "A picture of the traffic"). A source
 * that has none answers zeros; a name no source could have, 404.
 */
export const trafficRoutes: FastifyPluginAsyncTypebox<TrafficRoutesOptions> = async (app, { store, guard }) => {
  app.addHook('onRequest', guard.requireToken);
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };

  app.get(
    '/api/sources/:source/traffic',
    { schema: { params: SourceParamsSchema, querystring: TrafficQuerySchema, response: { 200: TrafficSchema, ...errors } } },
    async (request) => {
      const source = request.params.source;
      try {
        checkSourceName(source);
      } catch (error) {
        const reason = error instanceof ProblemError ? ` ${error.message}` : '';
        throw new ProblemError('not_found', `No source could have this name.${reason}`);
      }
      const bucket = request.query.bucket ?? 'hour';
      const span = spanEndingAt(Date.now(), TRAFFIC_RANGES[request.query.range ?? '24h'], TRAFFIC_BUCKETS[bucket]);
      const to = spanEnd(span);
      const buckets = await store.read({ sources: [source], from: span.from, to, bucketMs: span.bucketMs });
      return {
        source,
        bucket,
        bucketSeconds: span.bucketMs / 1000,
        from: new Date(span.from).toISOString(),
        to: new Date(to).toISOString(),
        ...seriesOf(buckets, span),
      };
    },
  );
};
