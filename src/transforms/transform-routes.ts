import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { TokenGuard } from '../platform/http/auth.js';
import type { InboxStore } from '../deliveries/delivery-store.js';
import { deliveryOrNotFound } from '../deliveries/delivery-ref.js';
import { ProblemSchema } from '../api/schemas.js';
import {
  TransformListSchema,
  TransformParamsSchema,
  TransformRunBodySchema,
  TransformRunSchema,
} from '../api/transform-schemas.js';
import type { Transforms } from './transforms.js';

export interface TransformRoutesOptions {
  deliveries: InboxStore;
  transforms: Transforms;
  guard: TokenGuard;
}

/** Transforms (CONTRACT 10 "Try it"): the list, and a run on a stored delivery; every route needs the API token. */
export const transformRoutes: FastifyPluginAsyncTypebox<TransformRoutesOptions> = async (
  app,
  { deliveries, transforms, guard },
) => {
  app.addHook('onRequest', guard.requireToken);
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema };

  app.get('/api/transforms', { schema: { response: { 200: TransformListSchema, ...errors } } }, async () => ({
    items: transforms.list().map(({ name, version, limits }) => ({
      name,
      version,
      timeoutMs: limits.timeoutMs,
      memoryMb: limits.memoryMb,
      usedBy: transforms.usersOf(name),
    })),
  }));

  app.post(
    '/api/transforms/:name/run',
    { schema: { params: TransformParamsSchema, body: TransformRunBodySchema, response: { 200: TransformRunSchema, ...errors } } },
    async (request) => {
      const { name } = request.params;
      if (transforms.get(name) === undefined) throw noTransform(name);
      const delivery = await deliveryOrNotFound(deliveries, request.body.deliveryId);
      const result = await transforms.runOnDelivery(name, delivery);
      // Removed by a reload between the two looks.
      if (result === undefined) throw noTransform(name);
      const { transform, logs, durationMs } = result;
      return 'error' in result
        ? { error: result.error, logs, durationMs, version: transform.version }
        : { output: result.output, logs, durationMs, version: transform.version };
    },
  );
};

function noTransform(name: string): ProblemError {
  return new ProblemError('not_found', `The config has no transform named "${name.slice(0, 100)}".`);
}
