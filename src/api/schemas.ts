import { Type, type Static } from 'typebox';
import { FORWARD_STATUSES } from './forward-status.js';
import { MAX_SOURCE_CHARS } from '../platform/http/source-name.js';
import { POSITIVE_DIGITS } from '../platform/http/query-params.js';
import { SparklineSchema } from './traffic-schemas.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
  },
  { $id: 'Problem' },
);

/** The answer to an accepted webhook (CONTRACT 1); `duplicate` only when deduplication found a first copy. */
export const ReceivedSchema = Type.Object({
  id: Type.String(),
  source: Type.String(),
  receivedAt: Type.String({ description: 'RFC 3339 UTC with milliseconds' }),
  duplicate: Type.Optional(Type.Literal(true)),
});

export const VerificationSchema = Type.Object({
  status: Type.Union([Type.Literal('verified'), Type.Literal('failed'), Type.Literal('none')]),
  scheme: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});

export const DeliverySchema = Type.Object({
  id: Type.String(),
  seq: Type.Integer(),
  source: Type.String(),
  eventType: Type.Union([Type.String(), Type.Null()], {
    description:
      "Its event type (CONTRACT 8: from its scheme, the source's eventType setting, or the usual headers and body fields); null when it has none",
  }),
  receivedAt: Type.String({ description: 'RFC 3339 UTC with milliseconds' }),
  method: Type.String(),
  query: Type.String(),
  contentType: Type.String(),
  size: Type.Integer(),
  remoteAddress: Type.String(),
  headers: Type.Array(Type.Tuple([Type.String(), Type.String()])),
  body: Type.Unknown({ description: 'The parsed body: a JSON value, or form data as an object of strings and arrays' }),
  verification: VerificationSchema,
  forwards: Type.Array(
    Type.Object({
      destination: Type.String(),
      status: Type.Enum([...FORWARD_STATUSES]),
    }),
    { description: 'Where the delivery is forwarded (CONTRACT 6), and how far each got; empty when nowhere' },
  ),
});
export type DeliveryJson = Static<typeof DeliverySchema>;

export const DeliveryPageSchema = Type.Object({
  items: Type.Array(DeliverySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
export type DeliveryPage = Static<typeof DeliveryPageSchema>;

/** The most deliveries one page holds: a larger `limit` is capped to it (CONTRACT 3: at most 500). */
export const MAX_PAGE = 500;

/**
 * A page of the list ends early once its deliveries' bodies add up to this
 * many bytes (the one that reaches it included; `nextCursor` goes on from
 * there). Serialized, a body can grow sixfold (`\u0001` for each control
 * byte): 50 bodies of 5 MiB would make a string longer than V8 allows, and
 * building it would hold up every other request for seconds.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

/** The filters of the list and of the delete by filter (CONTRACT 8); checked further in delivery-filters.ts. */
const FILTER_PROPERTIES = {
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Only deliveries to this source.' })),
  eventType: Type.Optional(
    Type.String({
      maxLength: 1024,
      description:
        'Only deliveries of this event type, or with a trailing *, of every type that begins with the rest (invoice.*).',
    }),
  ),
  verification: Type.Optional(
    Type.String({ maxLength: 16, description: 'Only deliveries whose verification is verified, failed or none.' }),
  ),
  since: Type.Optional(Type.String({ maxLength: 64, description: 'Only deliveries received at or after this RFC 3339 time.' })),
  until: Type.Optional(Type.String({ maxLength: 64, description: 'Only deliveries received before this RFC 3339 time.' })),
  q: Type.Optional(
    Type.String({
      maxLength: 1024,
      description:
        'Only deliveries whose raw body (as UTF-8 text) or a header value contains this text, ignoring case: 3 to 256 characters.',
    }),
  ),
};

export const DeleteQuerySchema = Type.Object(FILTER_PROPERTIES);

export const DeletedSchema = Type.Object({ deleted: Type.Integer({ description: 'How many deliveries were deleted' }) });

/** The most deliveries `GET /api/deliveries/count` counts: past it, it answers this many and `atLeast: true`. */
export const MAX_COUNT = 100_000;

export const CountSchema = Type.Object({
  count: Type.Integer({ description: `How many deliveries match the filters, counted up to ${MAX_COUNT}` }),
  atLeast: Type.Boolean({ description: `True when the count stopped at ${MAX_COUNT}: at least that many match` }),
});

export const ListQuerySchema = Type.Object({
  ...FILTER_PROPERTIES,
  limit: Type.Optional(
    Type.String({
      pattern: POSITIVE_DIGITS,
      description: `Deliveries per page: a whole number from 1, in digits (50 when absent); a value above ${MAX_PAGE} is taken as ${MAX_PAGE}.`,
    }),
  ),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z_-]{1,32}$' })),
});

/** The longest path parameter the router hands to a route; see app.ts. */
export const MAX_PARAM_LENGTH = 1000;

/** Any id: one that is empty, too long or was never handed out is simply not found (404). */
export const IdParamsSchema = Type.Object({
  id: Type.String({ maxLength: MAX_PARAM_LENGTH }),
});

/** A delivery by its id or by its seq (src/deliveries/delivery-ref.ts); anything else is simply not found (404). */
export const DeliveryRefParamsSchema = Type.Object({
  id: Type.String({
    maxLength: MAX_PARAM_LENGTH,
    description:
      "The delivery's id, or its seq in digits (the number the page shows, as `42`): a seq is unique, so it names one delivery",
    examples: ['019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d41', '42'],
  }),
});

/** Sources one page holds when `limit` is absent, and at most (a larger `limit` is capped to it). */
export const SOURCE_PAGE = 100;
export const MAX_SOURCE_PAGE = 500;

export const SourceQuerySchema = Type.Object({
  limit: Type.Optional(
    Type.String({
      pattern: POSITIVE_DIGITS,
      description: `Sources per page: a whole number from 1, in digits (${SOURCE_PAGE} when absent); a value above ${MAX_SOURCE_PAGE} is taken as ${MAX_SOURCE_PAGE}.`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({ pattern: '^[0-9A-Za-z_-]{1,1024}$', description: 'The nextCursor of the page before, as it was handed out.' }),
  ),
  q: Type.Optional(
    Type.String({
      maxLength: MAX_SOURCE_CHARS,
      description: `Only sources whose name contains this text, ignoring case: up to ${MAX_SOURCE_CHARS} characters (empty: every source).`,
    }),
  ),
  traffic: Type.Optional(
    Type.Literal('24h', {
      description: 'Add each source’s deliveries and refusals of the last 24 hours, hour by hour (a sparkline).',
    }),
  ),
});

export const SourceListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      source: Type.String(),
      count: Type.Integer(),
      lastReceivedAt: Type.String({ description: 'RFC 3339 UTC with milliseconds' }),
      traffic: Type.Optional(SparklineSchema),
    }),
    { description: 'Ordered by name, code point by code point' },
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass it back as cursor (with the same q) for the next page; null on the last page',
  }),
});

/** Event types per page, at most (a larger `limit` is capped to it), and when `limit` is absent. */
export const MAX_EVENT_TYPES = 1000;

export const EventTypeQuerySchema = Type.Object({
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "Only this source's event types." })),
  limit: Type.Optional(
    Type.String({
      pattern: POSITIVE_DIGITS,
      description: `Event types at most, the most frequent first: a whole number from 1 (${MAX_EVENT_TYPES} when absent, and at most).`,
    }),
  ),
});

export const EventTypeListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      source: Type.String(),
      eventType: Type.Union([Type.String(), Type.Null()], { description: 'null: the deliveries that have no event type' }),
      count: Type.Integer(),
      lastReceivedAt: Type.String({ description: 'RFC 3339 UTC with milliseconds' }),
    }),
    { description: 'The most frequent first, then by source and event type' },
  ),
});
export type EventTypeList = Static<typeof EventTypeListSchema>;
