import { Type, type Static } from 'typebox';
import { POSITIVE_DIGITS } from '../platform/http/query-params.js';

/** A refused request to `/api/webhook/{source}` (CONTRACT 9), as the API shows it. */
export const RefusalSchema = Type.Object({
  id: Type.String(),
  seq: Type.Integer({ description: "The refusal's position among the refusals (not the inbox's seq): the list's order" }),
  source: Type.Union([Type.String(), Type.Null()], {
    description: 'The source named in the path; null when that was not a valid source name',
  }),
  receivedAt: Type.String({ description: 'RFC 3339 UTC with milliseconds' }),
  method: Type.String(),
  status: Type.Integer({ description: 'The HTTP status the sender was answered' }),
  code: Type.String({ description: "The problem's code, as the sender got it (docs/errors.md)" }),
  detail: Type.String({ description: "The problem's detail, as the sender got it" }),
  contentType: Type.String({ description: 'The Content-Type header as sent; empty when there was none' }),
  size: Type.Integer({
    description:
      "The body's size in bytes as far as it is known: its length when read, else its Content-Length, else what arrived",
  }),
  headers: Type.Array(Type.Tuple([Type.String(), Type.String()]), {
    description: "In arrival order, redacted as a delivery's; empty when the request was refused before its headers were whole",
  }),
  bodyPreview: Type.String({
    description:
      "The body's first 4 KiB as text, invalid UTF-8 replaced by U+FFFD; empty when none arrived or the request was refused for its size",
  }),
});
export type RefusalJson = Static<typeof RefusalSchema>;

export const RefusalPageSchema = Type.Object({
  items: Type.Array(RefusalSchema, { description: 'Newest first' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass it back as cursor (with the same source) for the next, older page; null on the last page',
  }),
});
export type RefusalPage = Static<typeof RefusalPageSchema>;

/** The most refusals one page holds: a larger `limit` is capped to it. */
export const MAX_REFUSAL_PAGE = 500;

export const RefusalQuerySchema = Type.Object({
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Only the refusals of this source' })),
  limit: Type.Optional(
    Type.String({
      pattern: POSITIVE_DIGITS,
      description: `Refusals per page: a whole number from 1, in digits (50 when absent); a value above ${MAX_REFUSAL_PAGE} is taken as ${MAX_REFUSAL_PAGE}.`,
    }),
  ),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z_-]{1,32}$', description: 'The nextCursor of the page before' })),
});
