/**
 * The tag, `operationId` and one-line `summary` of each operation of the
 * OpenAPI document, so that /docs groups the routes by area and generated
 * clients get method names. Kept here beside the examples rather than in each
 * feature's routes: test/integration/openapi.test.ts checks that every route
 * of the document has its entry here (a new route needs one) and that no
 * entry names a route that is not there.
 */

/** The areas of the API, in the order /docs shows them. */
export const API_TAGS = [
  { name: 'webhooks', description: 'Receiving: what senders call. No token.' },
  { name: 'inbox', description: 'The stored deliveries: read, count, download and delete them.' },
  { name: 'sources', description: 'The inboxes that deliveries were sent to.' },
  { name: 'traffic', description: 'How many deliveries, refusals and forwards, over time.' },
  { name: 'refusals', description: 'The requests the webhook route refused, kept to debug a sender.' },
  { name: 'stream', description: 'New deliveries as they are stored, as Server-Sent Events.' },
  { name: 'forwarding', description: 'Destinations and the forwards that hand each delivery on to them.' },
  { name: 'transforms', description: 'The functions that reshape what a route sends: list them, try one on a stored delivery.' },
  {
    name: 'issues',
    description: 'What is wrong now or was: failing destinations, dead letters, backlogs, signatures, transforms.',
  },
  { name: 'pull consumers', description: 'Claim, acknowledge and give back the forwards of a pull destination.' },
  { name: 'session', description: "The web page's login: a session cookie for the API token." },
  { name: 'health', description: 'Liveness, readiness and Prometheus metrics. No token.' },
] as const;

export type ApiTag = (typeof API_TAGS)[number]['name'];

export interface OperationDoc {
  tag: ApiTag;
  /** camelCase, unique in the document. */
  operationId: string;
  summary: string;
  /** The route needs no token (the document's default is the bearer token). */
  noToken?: true;
}

/** By `METHOD path` as the document names the route. */
export const ROUTE_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'POST /api/webhook/{source}': {
    tag: 'webhooks',
    operationId: 'receiveWebhook',
    summary: 'Receive a webhook, answered 200 (or what the source sets) once it is committed',
    noToken: true,
  },
  'GET /healthz': { tag: 'health', operationId: 'checkLiveness', summary: 'Alive: 200 while the process runs', noToken: true },
  'GET /readyz': {
    tag: 'health',
    operationId: 'checkReadiness',
    summary: 'Ready: 200 while the store takes writes, else 503',
    noToken: true,
  },
  'GET /metrics': { tag: 'health', operationId: 'getMetrics', summary: 'Prometheus metrics, in the text format', noToken: true },
  'GET /api/transforms': {
    tag: 'transforms',
    operationId: 'listTransforms',
    summary: 'List the transforms of the config in force, with their versions and the routes that use them',
  },
  'POST /api/transforms/{name}/run': {
    tag: 'transforms',
    operationId: 'runTransform',
    summary: 'Run a transform on a stored delivery: its output (or error) and console.log lines; nothing is sent',
  },
  'GET /api/deliveries': {
    tag: 'inbox',
    operationId: 'listDeliveries',
    summary: 'List deliveries, newest first, a page at a time, with filters',
  },
  'DELETE /api/deliveries': { tag: 'inbox', operationId: 'deleteDeliveries', summary: 'Delete every delivery the filters match' },
  'GET /api/deliveries/count': {
    tag: 'inbox',
    operationId: 'countDeliveries',
    summary: 'Count the deliveries the filters match',
  },
  'GET /api/event-types': {
    tag: 'inbox',
    operationId: 'listEventTypes',
    summary: 'List the event types received, per source, with counts',
  },
  'GET /api/deliveries/{id}': { tag: 'inbox', operationId: 'getDelivery', summary: 'Get one delivery by its id or seq' },
  'DELETE /api/deliveries/{id}': { tag: 'inbox', operationId: 'deleteDelivery', summary: 'Delete one delivery' },
  'GET /api/deliveries/{id}/raw': {
    tag: 'inbox',
    operationId: 'getDeliveryRaw',
    summary: 'Download the body bytes exactly as received',
  },
  'GET /api/deliveries/{id}/files/{index}': {
    tag: 'inbox',
    operationId: 'getDeliveryFile',
    summary: 'Download one file of a multipart delivery',
  },
  'GET /api/sources': {
    tag: 'sources',
    operationId: 'listSources',
    summary: 'List sources by name, with counts and the time of the last delivery',
  },
  'GET /api/sources/{source}/traffic': {
    tag: 'traffic',
    operationId: 'getSourceTraffic',
    summary: "Get a source's deliveries, refusals and forwards over time, in buckets",
  },
  'GET /api/refusals': {
    tag: 'refusals',
    operationId: 'listRefusals',
    summary: 'List the requests the webhook route refused, newest first',
  },
  'GET /api/issues': {
    tag: 'issues',
    operationId: 'listIssues',
    summary: 'List the issues, open or resolved, newest first',
  },
  'POST /api/issues/{id}/resolve': {
    tag: 'issues',
    operationId: 'resolveIssue',
    summary: 'Resolve an issue by hand (204 when it was resolved already)',
  },
  'GET /api/stream': { tag: 'stream', operationId: 'streamDeliveries', summary: 'Follow new deliveries as Server-Sent Events' },
  'GET /api/destinations': {
    tag: 'forwarding',
    operationId: 'listDestinations',
    summary: 'List destinations with their backlog and last outcomes',
  },
  'POST /api/destinations/{name}/pause': {
    tag: 'forwarding',
    operationId: 'pauseDestination',
    summary: 'Pause forwarding to a destination',
  },
  'POST /api/destinations/{name}/resume': {
    tag: 'forwarding',
    operationId: 'resumeDestination',
    summary: 'Resume forwarding to a paused destination',
  },
  'GET /api/deliveries/{id}/forwards': {
    tag: 'forwarding',
    operationId: 'listDeliveryForwards',
    summary: "List a delivery's forwards, each with its attempts",
  },
  'GET /api/forwards': {
    tag: 'forwarding',
    operationId: 'listForwards',
    summary: 'List forwards, newest first, by destination, status or source',
  },
  'POST /api/forwards/retry': {
    tag: 'forwarding',
    operationId: 'retryForwards',
    summary: 'Send failed forwards again, with a fresh attempt budget',
  },
  'POST /api/forwards/{id}/cancel': { tag: 'forwarding', operationId: 'cancelForward', summary: 'Cancel a forward' },
  'POST /api/deliveries/{id}/forward': {
    tag: 'forwarding',
    operationId: 'forwardDelivery',
    summary: 'Send a delivery to a destination again, as a new forward',
  },
  'POST /api/destinations/{name}/claim': {
    tag: 'pull consumers',
    operationId: 'claimForwards',
    summary: 'Claim pending forwards of a pull destination, each under a lease',
  },
  'POST /api/forwards/{id}/ack': {
    tag: 'pull consumers',
    operationId: 'ackForward',
    summary: 'Acknowledge a claimed forward: it is done',
  },
  'POST /api/forwards/{id}/nack': {
    tag: 'pull consumers',
    operationId: 'nackForward',
    summary: 'Give a claimed forward back, to be tried again later',
  },
  'POST /api/session': {
    tag: 'session',
    operationId: 'logIn',
    summary: 'Log in: trade the API token for a session cookie',
    noToken: true,
  },
  'DELETE /api/session': { tag: 'session', operationId: 'logOut', summary: 'Log out: clear the session cookie', noToken: true },
};

interface Operation {
  tags?: string[];
  operationId?: string;
  summary?: string;
  security?: unknown[];
}

/** Puts each operation's tag, operationId and summary into the document (and `security: []` where no token is needed). */
export function withOperations(paths: Record<string, Record<string, Operation>>): void {
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const doc = ROUTE_OPERATIONS[`${method.toUpperCase()} ${path}`];
      if (doc === undefined) continue;
      operation.tags = [doc.tag];
      operation.operationId = doc.operationId;
      operation.summary = doc.summary;
      if (doc.noToken === true) operation.security = [];
    }
  }
}
