import { Type, type Static } from 'typebox';
import { ISSUE_KINDS } from './issue-signals.js';
import { POSITIVE_DIGITS } from '../platform/http/query-params.js';

/**
 * The issues API's shapes (CONTRACT 11, docs/alerts.md): validation,
 * serialization and the OpenAPI document. Beside the feature rather than in
 * api/: the kinds come from issue-signals.ts, and api/ imports no feature
 * (deliveries imports api/, and the tracker imports deliveries).
 */

const Time = { description: 'RFC 3339 UTC with milliseconds' };

export const IssueSchema = Type.Object({
  id: Type.String(),
  kind: Type.Enum([...ISSUE_KINDS]),
  subject: Type.String({
    description:
      'The destination (destination_down, dead_letters, backlog), source (verification_failing) or transform (transform_failing) it is about',
  }),
  status: Type.Enum(['open', 'resolved']),
  count: Type.Integer({ description: 'Occurrences counted on it since it opened' }),
  firstAt: Type.String(Time),
  lastAt: Type.String({ description: 'The last occurrence, RFC 3339 UTC with milliseconds' }),
  resolvedAt: Type.Union([Type.String(Time), Type.Null()], { description: 'null while open' }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description:
      'What the last occurrence said (at most 1000 characters); null when none said anything. Text from outside: show it as text',
  }),
});
export type IssueJson = Static<typeof IssueSchema>;

export const IssuePageSchema = Type.Object({
  items: Type.Array(IssueSchema, { description: 'Newest first (by when the issue opened)' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass it back as cursor (with the same status) for the next, older page; null on the last page',
  }),
});

/** The most issues one page holds: a larger `limit` is taken as it. */
export const MAX_ISSUE_PAGE = 500;

export const IssueQuerySchema = Type.Object({
  status: Type.Optional(
    Type.Enum(['open', 'resolved'], { description: 'Only the open, or only the resolved, issues; both when absent' }),
  ),
  limit: Type.Optional(
    Type.String({
      pattern: POSITIVE_DIGITS,
      description: `Issues per page: a whole number from 1, in digits (50 when absent); a value above ${MAX_ISSUE_PAGE} is taken as ${MAX_ISSUE_PAGE}.`,
    }),
  ),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z_-]{1,64}$', description: 'The nextCursor of the page before' })),
});
