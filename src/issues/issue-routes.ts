import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { IssuePageSchema, IssueQuerySchema, MAX_ISSUE_PAGE, type IssueJson } from './issue-schemas.js';
import { IdParamsSchema, ProblemSchema } from '../api/schemas.js';
import type { Issue } from './issue-signals.js';
import type { IssueStore } from './issue-store.js';
import type { IssueTracker } from './issue-tracker.js';

export interface IssueRoutesOptions {
  store: IssueStore;
  tracker: IssueTracker;
  guard: TokenGuard;
}

/**
 * `GET /api/issues?status=&cursor=&limit=` and `POST /api/issues/{id}/resolve`
 * (CONTRACT 11, docs/alerts.md): newest first, a page at a time; the API
 * token is needed, as for the inbox. Resolving one already resolved is 204
 * too: the person's wish holds, whoever resolved it first.
 */
export const issueRoutes: FastifyPluginAsyncTypebox<IssueRoutesOptions> = async (app, { store, tracker, guard }) => {
  app.addHook('onRequest', guard.requireToken);
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };

  app.get(
    '/api/issues',
    { schema: { querystring: IssueQuerySchema, response: { 200: IssuePageSchema, ...errors } } },
    async (request) => {
      const { query } = request;
      const limit =
        query.limit === undefined ? 50 : Math.min(Number(query.limit.length > 6 ? MAX_ISSUE_PAGE : query.limit), MAX_ISSUE_PAGE);
      const beforeId = query.cursor === undefined ? undefined : decodeIssueCursor(query.cursor);
      const rows = await store.list({
        limit: limit + 1,
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(beforeId === undefined ? {} : { beforeId }),
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map(issueJson),
        nextCursor: rows.length > limit && last !== undefined ? encodeIssueCursor(last.id) : null,
      };
    },
  );

  app.post(
    '/api/issues/:id/resolve',
    { schema: { params: IdParamsSchema, response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      const outcome = await tracker.resolve(request.params.id);
      if (outcome.status === 'not_found') throw new ProblemError('not_found', 'No issue has this id.');
      return reply.code(204).send(null);
    },
  );
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** An issue as the API shows it. */
export function issueJson(issue: Issue): IssueJson {
  return {
    id: issue.id,
    kind: issue.kind,
    subject: issue.subject,
    status: issue.status,
    count: issue.count,
    firstAt: iso(issue.firstAt),
    lastAt: iso(issue.lastAt),
    resolvedAt: issue.resolvedAt === null ? null : iso(issue.resolvedAt),
    lastError: issue.lastError,
  };
}

/** A cursor of the issues: the last id of the page, opaque to clients, told apart from the other lists' cursors. */
export function encodeIssueCursor(id: string): string {
  return Buffer.from(`i${id}`).toString('base64url');
}

function decodeIssueCursor(cursor: string): string {
  const match = /^i([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (match?.[1] === undefined || encodeIssueCursor(match[1]) !== cursor) {
    throw new ProblemError('invalid_query', 'The cursor is not one this server handed out for the issues.');
  }
  return match[1];
}
