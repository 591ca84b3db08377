// The refusals API (CONTRACT 9) as the page uses it: the requests refused on
// the webhook route, newest first, a page at a time. Same session cookie as
// the inbox API.

import type { Static } from 'typebox';
import type { RefusalPageSchema, RefusalSchema } from '../../src/api/refusal-schemas.js';
import { call } from './api.ts';

// The shapes come from the API's schemas (type-only imports, erased from the bundle).

/** One refused request: what the sender sent, and what it was answered. */
export type Refusal = Static<typeof RefusalSchema>;

export type RefusalPage = Static<typeof RefusalPageSchema>;

export async function listRefusals(options: { source?: string; cursor?: string; limit?: number }): Promise<RefusalPage> {
  const search = new URLSearchParams();
  if (options.source !== undefined) search.set('source', options.source);
  if (options.cursor !== undefined) search.set('cursor', options.cursor);
  if (options.limit !== undefined) search.set('limit', String(options.limit));
  const text = search.toString();
  const response = await call(`/api/refusals${text === '' ? '' : `?${text}`}`);
  return (await response.json()) as RefusalPage;
}
