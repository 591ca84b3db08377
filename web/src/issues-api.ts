// The issues API (CONTRACT 11, docs/alerts.md) as the page uses it: the open
// or the resolved issues, and resolving one. Same session cookie as the inbox API.

import type { Static } from 'typebox';
import type { IssueSchema } from '../../src/issues/issue-schemas.js';
import { call } from './api.ts';

/** One issue; the shape comes from the API's schema (a type-only import, erased from the bundle). */
export type IssueInfo = Static<typeof IssueSchema>;

/** The open (or the resolved) issues, newest first (at most 500: more than a panel can show). */
export async function listIssues(status: IssueInfo['status'] = 'open'): Promise<{ items: IssueInfo[]; more: boolean }> {
  const response = await call(`/api/issues?status=${status}&limit=500`);
  const page = (await response.json()) as { items: IssueInfo[]; nextCursor: string | null };
  return { items: page.items, more: page.nextCursor !== null };
}

/** Resolves an issue by hand; one already resolved is fine (204 too). */
export async function resolveIssue(id: string): Promise<void> {
  await call(`/api/issues/${encodeURIComponent(id)}/resolve`, { method: 'POST' });
}
