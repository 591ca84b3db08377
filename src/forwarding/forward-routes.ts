import { closedCircuit, type Circuit, type CircuitState } from './circuit/circuit.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { Forwarder } from './forwarder.js';
import type { ConnectionStatus } from './publishers/broker-connection.js';
import { shownUrl } from './url-secrets.js';
import { newDeliveryId } from '../deliveries/delivery-id.js';
import type { InboxStore } from '../deliveries/delivery-store.js';
import type { Forward, Outbox } from './outbox/outbox.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { decodeCursor, encodeCursor } from '../platform/http/cursor.js';
import {
  DeliveryForwardsSchema,
  DestinationListSchema,
  ForwardPageSchema,
  ForwardListQuerySchema,
  ForwardSchema,
  NameParamsSchema,
  RetryBodySchema,
  SendAgainBodySchema,
} from '../api/forward-schemas.js';
import { DeliveryRefParamsSchema, IdParamsSchema, MAX_PAGE, ProblemSchema } from '../api/schemas.js';
import { deliveryOrNotFound, findDelivery, noDeliveryProblem } from '../deliveries/delivery-ref.js';
import { pullRoutes } from './pull-routes.js';

export interface ForwardRoutesOptions {
  /** Where the deliveries are read (a forward names its delivery). */
  deliveries: InboxStore;
  outbox: Outbox;
  guard: TokenGuard;
  forwarder: Forwarder;
  /**
   * The transform of the source's route to the destination in the config in
   * force (CONTRACT 10), for a forward sent again; null or absent: none.
   */
  transformOf?: (source: string, destination: string) => string | null;
  /** Called after a retry or a cancel changed forwards: dead letters may have cleared (docs/alerts.md). */
  afterRetryOrCancel?: () => void;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Forwarding (CONTRACT 6): destinations, forwards, retries and pull consumers; every route needs the API token. */
export const forwardRoutes: FastifyPluginAsyncTypebox<ForwardRoutesOptions> = async (
  app,
  { deliveries, outbox, guard, forwarder, transformOf, afterRetryOrCancel },
) => {
  app.addHook('onRequest', guard.requireToken);
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema };

  /** A destination of the config in force, or one the outbox still knows of (removed from the config). */
  const known = async (name: string): Promise<boolean> =>
    forwarder.get(name) !== undefined || (await outbox.destinations()).some((d) => d.name === name);

  app.get('/api/destinations', { schema: { response: { 200: DestinationListSchema, ...errors } } }, async () => {
    const states = new Map((await outbox.destinations()).map((state) => [state.name, state]));
    const names = [...new Set([...forwarder.list().map((d) => d.name), ...states.keys()])].sort();
    return {
      items: names.map((name) => {
        const destination = forwarder.get(name);
        const state = states.get(name);
        return {
          name,
          kind: destination?.kind ?? 'removed',
          url: destination?.url === undefined ? null : shownUrl(destination.url),
          paused: state?.paused ?? false,
          pending: state?.pending ?? 0,
          failed: state?.failed ?? 0,
          oldestPendingAt: iso(state?.oldestPendingAt ?? null),
          lastSuccessAt: iso(state?.lastSuccessAt ?? null),
          lastFailureAt: iso(state?.lastFailureAt ?? null),
          lastError: state?.lastError ?? null,
          connection: connectionJson(forwarder.connectionOf(name)),
          circuit: circuitJson(destination?.kind === 'pull' ? undefined : state?.circuit),
        };
      }),
    };
  });

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/api/destinations/:name/${action}`,
      {
        schema: { params: NameParamsSchema, response: { 204: Type.Null(), ...errors } },
      },
      async (request, reply) => {
        const { name } = request.params;
        if (!(await known(name))) throw noDestination(name);
        await outbox.setPaused(name, action === 'pause');
        if (action === 'resume') forwarder.wake(name);
        return reply.code(204).send(null);
      },
    );
  }

  app.get(
    '/api/deliveries/:id/forwards',
    {
      schema: { params: DeliveryRefParamsSchema, response: { 200: DeliveryForwardsSchema, ...errors } },
    },
    async (request) => {
      const delivery = await deliveryOrNotFound(deliveries, request.params.id);
      const forwards = await outbox.forwardsOf(delivery.id);
      return {
        items: forwards.map((f) => ({
          id: f.id,
          destination: f.destination,
          status: f.status,
          nextAttemptAt: nextAttemptAt(f),
          attempts: f.attempts.map((a) => ({
            n: a.n,
            startedAt: new Date(a.startedAt).toISOString(),
            durationMs: a.durationMs,
            status: a.status,
            error: a.error,
            response: a.response,
            transform: a.transform,
          })),
        })),
      };
    },
  );

  app.get(
    '/api/forwards',
    {
      schema: { querystring: ForwardListQuerySchema, response: { 200: ForwardPageSchema, ...errors } },
    },
    async (request) => {
      const { query } = request;
      const limit = Math.min(query.limit === undefined ? 50 : Number(query.limit.length > 6 ? MAX_PAGE : query.limit), MAX_PAGE);
      const rows = await outbox.list({
        limit: limit + 1,
        ...(query.destination === undefined ? {} : { destination: query.destination }),
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.source === undefined ? {} : { source: query.source }),
        ...(query.cursor === undefined ? {} : { beforePosition: decodeCursor(query.cursor) }),
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map((f) => forwardJson(f, f.lastAttemptAt)),
        nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last.position) : null,
      };
    },
  );

  app.post(
    '/api/forwards/retry',
    {
      schema: { body: RetryBodySchema, response: { 200: Type.Object({ retried: Type.Integer() }), ...errors } },
    },
    async (request) => {
      const body = request.body;
      const now = Date.now();
      let retried: number;
      if ('ids' in body) retried = await outbox.retry({ ids: body.ids }, now);
      else {
        retried = await outbox.retry(
          {
            ...(body.destination === undefined ? {} : { destination: body.destination }),
            ...(body.source === undefined ? {} : { source: body.source }),
            ...(body.since === undefined ? {} : { since: Date.parse(body.since) }),
            ...(body.until === undefined ? {} : { until: Date.parse(body.until) }),
          },
          now,
        );
      }
      forwarder.wakeAll();
      if (retried > 0) afterRetryOrCancel?.();
      return { retried };
    },
  );

  app.post(
    '/api/forwards/:id/cancel',
    {
      schema: { params: IdParamsSchema, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      if (!(await outbox.cancel(request.params.id, Date.now()))) throw noForward(request.params.id);
      afterRetryOrCancel?.();
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/deliveries/:id/forward',
    {
      schema: { params: DeliveryRefParamsSchema, body: SendAgainBodySchema, response: { 201: ForwardSchema, ...errors } },
    },
    async (request, reply) => {
      const { destination } = request.body;
      if (forwarder.get(destination) === undefined) throw noDestination(destination);
      const delivery = await findDelivery(deliveries, request.params.id);
      // Sent again as its route sends it: with the route's transform, when the source has a route there.
      const transform = delivery === undefined ? null : (transformOf?.(delivery.source, destination) ?? null);
      const forward =
        delivery === undefined
          ? undefined
          : await outbox.create(delivery.id, { id: newDeliveryId(), destination, transform }, Date.now());
      if (forward === undefined) throw noDeliveryProblem(request.params.id);
      forwarder.wake(destination);
      return reply.code(201).send(forwardJson(forward));
    },
  );

  await app.register(pullRoutes, { outbox, forwarder });
};

/** A forward as the API shows it; `lastAttemptAt` is the list's (a new forward has made none). */
export function forwardJson(
  f: Forward,
  lastAttemptAt: number | null = null,
): {
  id: string;
  deliveryId: string;
  seq: number;
  source: string;
  destination: string;
  status: Forward['status'];
  attemptCount: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
} {
  return {
    id: f.id,
    deliveryId: f.deliveryId,
    seq: f.deliverySeq,
    source: f.source,
    destination: f.destination,
    status: f.status,
    attemptCount: f.attemptCount,
    nextAttemptAt: nextAttemptAt(f),
    lastAttemptAt: iso(lastAttemptAt),
    lastStatus: f.lastStatus,
    lastError: f.lastError,
  };
}

/** When it is next attempted: only a pending forward has such a time (a delivering one's is its lease). */
function nextAttemptAt(f: Forward): string | null {
  return f.status === 'pending' ? iso(f.nextAttemptAt) : null;
}

/** A destination's URL as the API shows it: no user, password or query (they may carry secrets). */
function connectionJson(status: ConnectionStatus | undefined) {
  return status === undefined
    ? null
    : { state: status.state, lastError: status.lastError, since: new Date(status.since).toISOString() };
}

/** A destination's circuit as the API shows it (docs/circuits.md); closed when it has none (pull, never failed). */
function circuitJson(circuit: Circuit | undefined): {
  state: CircuitState;
  since: string | null;
  consecutiveFailures: number;
  until: string | null;
} {
  const c = circuit ?? closedCircuit();
  return { state: c.state, since: iso(c.since), consecutiveFailures: c.consecutiveFailures, until: iso(c.until) };
}

function noDestination(name: string): ProblemError {
  return new ProblemError('not_found', `No destination is named "${name.slice(0, 100)}" in the config file (destinations).`);
}

function noForward(id: string): ProblemError {
  return new ProblemError('not_found', `No forward has the id "${id.slice(0, 100)}".`);
}
