import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../platform/observe/metrics.js';
import type { BodyBudget } from '../body/body-budget.js';
import type { InboxStore } from '../deliveries/delivery-store.js';
import type { WriteQueue } from './write-queue.js';
import { ReadinessCheck } from './readiness.js';

export interface HealthRoutesOptions {
  store: InboxStore;
  queue: WriteQueue;
  incoming: BodyBudget;
  metrics: Metrics;
}

/**
 * `/healthz` (alive), `/readyz` (the store takes writes: a probe write
 * commits and there is room, checked at most once a second), `/metrics`
 * (Prometheus). No token.
 */
export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, { store, queue, incoming, metrics }) => {
  const readiness = new ReadinessCheck(() => store.checkWritable());
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    try {
      await readiness.check();
      return { status: 'ready', store: store.kind };
    } catch (error) {
      request.log.warn({ err: error }, 'not ready');
      return reply.code(503).header('retry-after', '5').send({ status: 'unavailable', store: store.kind });
    }
  });

  app.get('/metrics', async (_request, reply) => {
    metrics.queueDepth.set(queue.depth);
    metrics.incomingBodyBytes.set(incoming.bytes);
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
};
