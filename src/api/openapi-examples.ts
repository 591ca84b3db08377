import { problemCatalogue, problemFor, type ProblemCode } from '../platform/errors/problem-catalogue.js';

/**
 * An example for each route of the OpenAPI document: its JSON request body
 * and its JSON success answer, and for every problem answer the problem of
 * that status (from the error catalogue). They are added to the document
 * (`withExamples`), so that /docs shows real values instead of "string",
 * and test/integration/openapi.test.ts checks that each route has them and
 * that each is valid against its own schema: a new route needs its entry.
 */

const ID = '019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d41';
const FORWARD_ID = '019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d42';
const AT = '2026-11-22T01:02:03.456Z';
const LEASE = 'Vq3m1Yx0Rk2p8Zb4TnWc7A';

const DELIVERY = {
  id: ID,
  seq: 42,
  source: 'github',
  eventType: 'push',
  receivedAt: AT,
  method: 'POST',
  query: 'a=1',
  contentType: 'application/json',
  size: 53,
  remoteAddress: '203.0.113.7',
  headers: [
    ['Host', 'hooks.example.com'],
    ['Content-Type', 'application/json'],
    ['X-GitHub-Event', 'push'],
    ['Authorization', '[redacted]'],
  ],
  body: { event: 'push', data: { ref: 'refs/heads/main' } },
  verification: { status: 'verified', scheme: 'github' },
  forwards: [{ destination: 'app', status: 'succeeded' }],
};

const FORWARD = {
  id: FORWARD_ID,
  deliveryId: ID,
  seq: 42,
  source: 'github',
  destination: 'app',
  status: 'failed',
  attemptCount: 12,
  nextAttemptAt: null,
  lastAttemptAt: AT,
  lastStatus: 500,
  lastError: 'HTTP 500',
};

export interface RouteExamples {
  /** The JSON request body, by content type (the webhook route takes form data too). */
  request?: Readonly<Record<string, unknown>>;
  /** The answer of each success status that has a JSON body. */
  responses?: Readonly<Record<string, unknown>>;
}

/** By `METHOD path` as the document names the route. */
export const ROUTE_EXAMPLES: Readonly<Record<string, RouteExamples>> = {
  'POST /api/webhook/{source}': {
    request: {
      'application/json': { event: 'push', data: { ref: 'refs/heads/main' } },
      'application/x-www-form-urlencoded': { From: '+14155550100', Body: 'hi' },
      'multipart/form-data': { from: 'sender@example.com', subject: 'Hello', attachment1: '(the file, as sent)' },
      'text/plain': '{"Type":"Notification","MessageId":"22b80b92","Message":"hello"}',
      'application/xml': '<event><type>order.paid</type><id>1001</id></event>',
      '*/*': '(any bytes, any Content-Type or none)',
    },
    responses: { 200: { id: ID, source: 'github', receivedAt: AT } },
  },
  'GET /healthz': {},
  'GET /readyz': {},
  'GET /metrics': {},
  'GET /api/deliveries': { responses: { 200: { items: [DELIVERY], nextCursor: '41' } } },
  'GET /api/deliveries/{id}': { responses: { 200: DELIVERY } },
  'DELETE /api/deliveries/{id}': {},
  'DELETE /api/deliveries': { responses: { 200: { deleted: 212 } } },
  'GET /api/deliveries/count': { responses: { 200: { count: 212, atLeast: false } } },
  'GET /api/event-types': {
    responses: {
      200: {
        items: [
          { source: 'stripe', eventType: 'invoice.paid', count: 512, lastReceivedAt: AT },
          { source: 'stripe', eventType: 'customer.created', count: 40, lastReceivedAt: '2026-11-21T22:10:00.000Z' },
          { source: 'github', eventType: null, count: 3, lastReceivedAt: '2026-11-20T08:00:00.000Z' },
        ],
      },
    },
  },
  'GET /api/deliveries/{id}/raw': { responses: { 200: '{"event":"push","data":{"ref":"refs/heads/main"}}' } },
  'GET /api/deliveries/{id}/files/{index}': { responses: { 200: '(the file, byte for byte as sent)' } },
  'GET /api/sources': {
    responses: {
      200: {
        items: [
          { source: 'github', count: 1204, lastReceivedAt: AT },
          {
            source: 'stripe',
            count: 87,
            lastReceivedAt: '2026-11-21T22:10:00.000Z',
            traffic: {
              from: '2026-11-21T02:00:00.000Z',
              bucketSeconds: 3600,
              delivered: [0, 0, 3, 5, 2, 0, 0, 0, 1, 4, 9, 12, 8, 6, 4, 2, 0, 0, 0, 1, 3, 7, 0, 0],
              refused: [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            },
          },
        ],
        nextCursor: null,
      },
    },
  },
  'GET /api/sources/{source}/traffic': {
    responses: {
      200: {
        source: 'stripe',
        bucket: 'minute',
        bucketSeconds: 60,
        from: '2026-11-22T00:58:00.000Z',
        to: '2026-11-22T01:03:00.000Z',
        delivered: [4, 0, 7, 3, 1],
        refused: [0, 0, 2, 0, 0],
        forwarded: [4, 0, 6, 3, 0],
        forwardFailed: [0, 0, 1, 1, 0],
        dead: [0, 0, 0, 1, 0],
      },
    },
  },
  'GET /api/stream': {
    responses: { 200: `: heartbeat\n\nid: 42\nevent: delivery\ndata: ${JSON.stringify(DELIVERY)}\n\n` },
  },
  'GET /api/refusals': {
    responses: {
      200: {
        items: [
          {
            id: '019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d43',
            seq: 7,
            source: 'stripe',
            receivedAt: AT,
            method: 'POST',
            status: 401,
            code: 'signature_invalid',
            detail: 'The Stripe-Signature header does not match the body.',
            contentType: 'application/json',
            size: 18,
            headers: [
              ['Host', 'hooks.example.com'],
              ['Content-Type', 'application/json'],
              ['Stripe-Signature', 't=1795600000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd'],
            ],
            bodyPreview: '{"type":"test"}',
          },
        ],
        nextCursor: null,
      },
    },
  },
  'GET /api/issues': {
    responses: {
      200: {
        items: [
          {
            id: '019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d44',
            kind: 'destination_down',
            subject: 'billing-app',
            status: 'open',
            count: 3,
            firstAt: AT,
            lastAt: AT,
            resolvedAt: null,
            lastError: 'HTTP 503',
          },
        ],
        nextCursor: null,
      },
    },
  },
  'POST /api/issues/{id}/resolve': {},
  'GET /api/transforms': {
    responses: {
      200: {
        items: [
          {
            name: 'slack-text',
            version: '3f2a9c01b7de',
            timeoutMs: 50,
            memoryMb: 16,
            usedBy: [{ source: 'stripe', destination: 'slack' }],
          },
        ],
      },
    },
  },
  'POST /api/transforms/{name}/run': {
    request: { 'application/json': { deliveryId: ID } },
    responses: {
      200: {
        output: { body: { text: 'invoice.paid in_1' }, headers: { 'x-kind': 'invoice' } },
        logs: ['amount 1200'],
        durationMs: 0.412,
        version: '3f2a9c01b7de',
      },
    },
  },
  'GET /api/destinations': {
    responses: {
      200: {
        items: [
          {
            name: 'app',
            kind: 'http',
            url: 'https://app.example.com/hooks',
            paused: false,
            pending: 3,
            failed: 1,
            oldestPendingAt: AT,
            lastSuccessAt: AT,
            lastFailureAt: '2026-11-21T23:00:00.000Z',
            lastError: 'HTTP 500',
            connection: null,
            circuit: { state: 'closed', since: null, consecutiveFailures: 1, until: null },
          },
          {
            name: 'crm',
            kind: 'http',
            url: 'https://crm.example.com/webhooks',
            paused: false,
            pending: 42,
            failed: 0,
            oldestPendingAt: '2026-11-21T23:00:00.000Z',
            lastSuccessAt: '2026-11-21T22:58:10.000Z',
            lastFailureAt: AT,
            lastError: 'HTTP 503',
            connection: null,
            circuit: { state: 'open', since: AT, consecutiveFailures: 10, until: '2026-11-22T01:02:33.456Z' },
          },
        ],
      },
    },
  },
  'POST /api/destinations/{name}/pause': {},
  'POST /api/destinations/{name}/resume': {},
  'GET /api/deliveries/{id}/forwards': {
    responses: {
      200: {
        items: [
          {
            id: FORWARD_ID,
            destination: 'app',
            status: 'pending',
            nextAttemptAt: '2026-11-22T01:02:07.000Z',
            attempts: [
              {
                n: 1,
                startedAt: AT,
                durationMs: 31,
                status: 503,
                error: 'HTTP 503',
                response: {
                  headers: [
                    ['content-type', 'application/json'],
                    ['retry-after', '5'],
                  ],
                  body: '{"error":"database unavailable"}',
                  bodyTruncated: false,
                },
                transform: { name: 'slack-text', version: '3f1a9c0d2b7e' },
              },
            ],
          },
        ],
      },
    },
  },
  'GET /api/forwards': { responses: { 200: { items: [FORWARD], nextCursor: null } } },
  'POST /api/forwards/retry': {
    request: { 'application/json': { status: 'failed', destination: 'app', since: '2026-11-21T00:00:00Z' } },
    responses: { 200: { retried: 1 } },
  },
  'POST /api/forwards/{id}/cancel': {},
  'POST /api/deliveries/{id}/forward': {
    request: { 'application/json': { destination: 'app' } },
    responses: {
      201: {
        ...FORWARD,
        status: 'pending',
        attemptCount: 0,
        nextAttemptAt: AT,
        lastAttemptAt: null,
        lastStatus: null,
        lastError: null,
      },
    },
  },
  'POST /api/destinations/{name}/claim': {
    request: { 'application/json': { max: 10, visibilitySeconds: 30 } },
    responses: { 200: { items: [{ forwardId: FORWARD_ID, attempt: 1, lease: LEASE, delivery: DELIVERY }] } },
  },
  'POST /api/forwards/{id}/ack': { request: { 'application/json': { lease: LEASE } } },
  'POST /api/forwards/{id}/nack': { request: { 'application/json': { lease: LEASE, delaySeconds: 60 } } },
  'POST /api/session': { request: { 'application/json': { token: 'the API token' } } },
  'DELETE /api/session': {},
};

/** The first catalogue code of each status: the example of a problem answer. */
const PROBLEM_BY_STATUS = new Map<number, ProblemCode>();
for (const [code, { status }] of Object.entries(problemCatalogue) as Array<[ProblemCode, { status: number }]>) {
  if (!PROBLEM_BY_STATUS.has(status)) PROBLEM_BY_STATUS.set(status, code);
}
const DETAILS: Partial<Record<ProblemCode, string>> = {
  unauthorized: 'No API token was sent: send it as "Authorization: Bearer <token>".',
  not_found: 'There is no delivery with this id.',
  invalid_source: 'The source name may not contain "/".',
  rate_limited: 'Too many requests: wait 1 s.',
  storage_unavailable: 'The inbox cannot take the delivery now; send it again after Retry-After.',
};

interface MediaType {
  schema?: unknown;
  example?: unknown;
}
interface Operation {
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, MediaType> }>;
}

/** Puts the examples into the document's operations (`example` of each media type, as OpenAPI 3.1 has it). */
export function withExamples(paths: Record<string, Record<string, Operation>>): void {
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const examples = ROUTE_EXAMPLES[`${method.toUpperCase()} ${path}`];
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        const example = examples?.request?.[type];
        if (example !== undefined) media.example = example;
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const example = examples?.responses?.[status] ?? problemExample(Number(status), type, media);
          if (example !== undefined) media.example = example;
        }
      }
    }
  }
}

/** A problem of this status for a response whose schema is the problem's. */
function problemExample(status: number, type: string, media: MediaType): unknown {
  const code = PROBLEM_BY_STATUS.get(status);
  const schema = media.schema as { properties?: Record<string, unknown> } | undefined;
  if (code === undefined || status < 400 || (type !== 'application/problem+json' && schema?.properties?.code === undefined))
    return undefined;
  return problemFor(code, DETAILS[code] ?? problemCatalogue[code].title);
}
