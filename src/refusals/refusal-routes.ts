import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import { REFUSAL_PREVIEW_BYTES, type RefusalStore, type StoredRefusal } from './refusals.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { sourceFilter } from '../platform/http/query-params.js';
import { MAX_REFUSAL_PAGE, RefusalPageSchema, RefusalQuerySchema, type RefusalJson } from '../api/refusal-schemas.js';
import { ProblemSchema } from '../api/schemas.js';

export interface RefusalRoutesOptions {
  store: RefusalStore;
  guard: TokenGuard;
}

/**
 * `GET /api/refusals?source=&cursor=&limit=` (CONTRACT 9): the requests
 * refused on the webhook route, newest first, a page at a time; the API
 * token is needed, as for the inbox.
 */
export const refusalRoutes: FastifyPluginAsyncTypebox<RefusalRoutesOptions> = async (app, { store, guard }) => {
  app.addHook('onRequest', guard.requireToken);
  const errors = { 400: ProblemSchema, 401: ProblemSchema, 429: ProblemSchema };

  app.get(
    '/api/refusals',
    { schema: { querystring: RefusalQuerySchema, response: { 200: RefusalPageSchema, ...errors } } },
    async (request) => {
      const limit = Math.min(Number(request.query.limit ?? '50'), MAX_REFUSAL_PAGE);
      const source = sourceFilter(request.query.source);
      const beforeSeq = request.query.cursor === undefined ? undefined : decodeRefusalCursor(request.query.cursor);
      const rows = await store.list({
        limit: limit + 1,
        ...(source === undefined ? {} : { source }),
        ...(beforeSeq === undefined ? {} : { beforeSeq }),
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map(refusalJson),
        nextCursor: rows.length > limit && last !== undefined ? encodeRefusalCursor(last.seq) : null,
      };
    },
  );
};

/** A stored refusal as the API shows it. */
export function refusalJson(r: StoredRefusal): RefusalJson {
  return {
    id: r.id,
    seq: r.seq,
    source: r.source,
    receivedAt: new Date(r.receivedAt).toISOString(),
    method: r.method,
    status: r.status,
    code: r.code,
    detail: r.detail,
    contentType: r.contentType,
    size: r.size,
    headers: r.headers,
    bodyPreview: previewText(r.preview, r.size > r.preview.length && r.preview.length === REFUSAL_PREVIEW_BYTES),
  };
}

/**
 * The preview as text: UTF-8, each invalid sequence replaced by U+FFFD. A
 * preview cut at 4 KiB may end inside a character: that part is left off,
 * not shown as a replacement the sender never sent.
 */
export function previewText(preview: Buffer, cut: boolean): string {
  return new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(preview, { stream: cut });
}

/** A cursor of the refusals: a refusal's seq, opaque to clients, and told apart from an inbox cursor. */
export function encodeRefusalCursor(seq: number): string {
  return Buffer.from(`r${seq}`).toString('base64url');
}

function decodeRefusalCursor(cursor: string): number {
  const match = /^r(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (match?.[1] === undefined || encodeRefusalCursor(Number(match[1])) !== cursor) {
    throw new ProblemError('invalid_query', 'The cursor is not one this server handed out for the refusals.');
  }
  return Number(match[1]);
}
