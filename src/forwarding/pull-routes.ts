import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { backoffMs } from './backoff.js';
import { budgetOf, RETRY_DEFAULTS, type Destination } from './destination.js';
import type { Forwarder } from './forwarder.js';
import { CLAIM_MAX_BYTES, type Forward, type LeaseAnswer, type Outbox } from './outbox/outbox.js';
import { deliveryJson, deliveryText } from '../deliveries/delivery-json.js';
import { AckBodySchema, ClaimAnswerSchema, ClaimBodySchema, NackBodySchema, NameParamsSchema } from '../api/forward-schemas.js';
import { IdParamsSchema, ProblemSchema, type DeliveryJson } from '../api/schemas.js';

export interface PullRoutesOptions {
  outbox: Outbox;
  forwarder: Forwarder;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Pull consumers (CONTRACT 6, "Pull destinations" and "Leases are fenced";
 * docs/pull-consumers.md): claim, then ack or nack with the claim's lease.
 * Registered inside `forwardRoutes`, whose token check they share.
 */
export const pullRoutes: FastifyPluginAsyncTypebox<PullRoutesOptions> = async (app, { outbox, forwarder }) => {
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 409: ProblemSchema };

  app.post(
    '/api/destinations/:name/claim',
    {
      schema: { params: NameParamsSchema, body: Type.Optional(ClaimBodySchema), response: { 200: ClaimAnswerSchema, ...errors } },
      // Before the body is parsed (after the token check, a hook of forwardRoutes): an unknown destination
      // is 404 (a push one 409) whatever the body and its type, a form's 415 included.
      onRequest: async (request) => {
        pullDestination(forwarder.get(request.params.name), request.params.name);
      },
      // No body at all (`curl -X POST`) is the defaults, as `{}` is.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request, reply) => {
      const destination = pullDestination(forwarder.get(request.params.name), request.params.name);
      const claimed = await outbox.claim({
        destination: destination.name,
        max: request.body?.max ?? 10,
        leaseMs: (request.body?.visibilitySeconds ?? 30) * 1000,
        now: Date.now(),
        ordered: destination.ordered,
        budget: budgetOf(destination),
        maxBytes: CLAIM_MAX_BYTES,
      });
      const items = claimed.map(({ forward, delivery }) => ({
        forwardId: forward.id,
        attempt: forward.attemptCount,
        lease: forward.lease ?? '',
        delivery: deliveryJson(delivery),
      }));
      // A throw in the serializer is answered as a problem too (sendProblem, error-handler.ts).
      return reply.type(JSON_TYPE).serializer(claimText).send({ items });
    },
  );

  app.post(
    '/api/forwards/:id/ack',
    {
      schema: { params: IdParamsSchema, body: AckBodySchema, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      await pulledForward(outbox, forwarder, request.params.id);
      answered(await outbox.ack(request.params.id, request.body.lease, Date.now()), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/forwards/:id/nack',
    {
      schema: { params: IdParamsSchema, body: NackBodySchema, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      const forward = await pulledForward(outbox, forwarder, request.params.id);
      const destination = forwarder.get(forward.destination);
      const now = Date.now();
      // A destination removed from the config: its forwards keep the contract's defaults.
      const retry = destination?.retry ?? RETRY_DEFAULTS;
      const delay =
        request.body.delaySeconds === undefined
          ? backoffMs(forward.budgetUsed, retry.initialMs, retry.maxMs)
          : request.body.delaySeconds * 1000;
      const budget = { attempts: retry.attempts, maxAgeMs: retry.maxAgeSeconds * 1000 };
      answered(await outbox.nack(forward.id, request.body.lease, now, now + delay, budget), forward.id);
      return reply.code(204).send(null);
    },
  );
};

/** A claim's answer as JSON text, each delivery written by `deliveryText` (its JSON body as the sender's text). */
function claimText(answer: {
  items: Array<{ forwardId: string; attempt: number; lease: string; delivery: DeliveryJson }>;
}): string {
  const items = answer.items.map(
    ({ delivery, ...head }) => `${JSON.stringify(head).slice(0, -1)},"delivery":${deliveryText(delivery)}}`,
  );
  return `{"items":[${items.join(',')}]}`;
}

/**
 * The forward an ack or nack names: 404 when there is none, 409 `not_pull`
 * when the config pushes its destination (its attempt is the dispatcher's,
 * and may be in flight). A destination the config no longer names is left
 * to the lease: only a pull consumer ever held one that it could present.
 */
async function pulledForward(outbox: Outbox, forwarder: Forwarder, id: string): Promise<Forward> {
  const forward = await outbox.get(id);
  if (forward === undefined) throw noForward(id);
  const destination = forwarder.get(forward.destination);
  if (destination !== undefined && destination.kind !== 'pull') throw notPull(destination.name);
  return forward;
}

/** The outbox's answer to an ack or nack, as the API gives it (nothing to do for `ok`). */
function answered(answer: LeaseAnswer, id: string): void {
  if (answer === 'not_found') throw noForward(id);
  if (answer === 'lease_lost')
    throw new ProblemError(
      'lease_lost',
      "This lease is not the forward's current one: its visibility ran out, or the forward was claimed again or settled. Nothing changed; drop the result of the work (see docs/pull-consumers.md).",
    );
}

function pullDestination(destination: Destination | undefined, name: string): Destination {
  if (destination === undefined)
    throw new ProblemError('not_found', `No destination is named "${name.slice(0, 100)}" in the config file (destinations).`);
  if (destination.kind !== 'pull') throw notPull(name);
  return destination;
}

function notPull(name: string): ProblemError {
  return new ProblemError(
    'not_pull',
    `The destination "${name.slice(0, 100)}" is pushed to, not pulled from: only a destination with "pull: true" is claimed, acked or nacked.`,
  );
}

function noForward(id: string): ProblemError {
  return new ProblemError('not_found', `No forward has the id "${id.slice(0, 100)}".`);
}
