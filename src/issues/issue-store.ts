import { ISSUE_KINDS, type Issue, type IssueKind } from './issue-signals.js';

/**
 * Glossary (docs/alerts.md, CONTRACT 11)
 * - issue: something wrong that a person should know of, of one kind and
 *   about one subject (a destination, source or transform). At most one is
 *   open per kind and subject: the database's partial unique index holds it,
 *   for every instance on one PostgreSQL database.
 * - occurrence: one more sign of the cause (a failed attempt, a dead letter,
 *   a bad signature). The tracker sums a burst of them into one write.
 * - transition: an issue opening or resolving. The write that made it says
 *   so (PostgreSQL's answer, SQLite's transaction); only then is it told.
 */

/** Occurrences of one kind and subject summed by the tracker, written at once. */
export interface Occurrences {
  kind: IssueKind;
  subject: string;
  count: number;
  firstAt: number;
  lastAt: number;
  /** The last occurrence's error that said anything; null: none did. */
  lastError: string | null;
}

/** What one write of occurrences did: opened an issue, or counted on the open one. */
export interface Counted {
  issue: Issue;
  opened: boolean;
}

export interface IssueQuery {
  status?: Issue['status'];
  limit: number;
  /** Only issues with a smaller id (the list is newest first: ids sort by opening time). */
  beforeId?: string;
}

/** What resolving by id found. */
export type ResolveOutcome = { status: 'resolved'; issue: Issue } | { status: 'already_resolved' } | { status: 'not_found' };

/** The issues, as every backend keeps them; `contract/issue-store-contract.ts` holds them to it. */
export interface IssueStore {
  /** Opens the issue (with a new id, `newId`) or counts on the open one of that kind and subject. */
  occur(occurrences: Occurrences, newId: string): Promise<Counted>;
  /** Resolves the open issue of that kind and subject; the issue when this write resolved it, else null. */
  resolve(kind: IssueKind, subject: string, at: number): Promise<Issue | null>;
  /** Resolves one issue by id (a person). */
  resolveById(id: string, at: number): Promise<ResolveOutcome>;
  /** Resolves the open issues of these kinds with no occurrence since `before` (ms); returns those this write resolved. */
  resolveQuiet(kinds: readonly IssueKind[], before: number, at: number): Promise<Issue[]>;
  /** Newest first (by opening). */
  list(query: IssueQuery): Promise<Issue[]>;
  get(id: string): Promise<Issue | null>;
  /** Open issues per kind; every kind present, 0 when none. */
  countOpen(): Promise<Record<IssueKind, number>>;
}

/** An issues row as both SQL backends return it (PostgreSQL hands BIGINT back as strings). */
export interface IssueRow {
  id: string;
  kind: string;
  subject: string;
  status: string;
  count: number | string;
  first_at: number | string;
  last_at: number | string;
  resolved_at: number | string | null;
  last_error: string | null;
}

/** Sorts after every issue id (lowercase hex and dashes): the first page's bound. */
export const AFTER_EVERY_ID = '~';

export const ISSUE_COLUMNS = 'id, kind, subject, status, count, first_at, last_at, resolved_at, last_error';

export function issueFromRow(row: IssueRow): Issue {
  return {
    id: row.id,
    kind: row.kind as IssueKind,
    subject: row.subject,
    status: row.status === 'open' ? 'open' : 'resolved',
    count: Number(row.count),
    firstAt: Number(row.first_at),
    lastAt: Number(row.last_at),
    resolvedAt: row.resolved_at === null ? null : Number(row.resolved_at),
    lastError: row.last_error,
  };
}

/** Every kind at 0, then the counts a backend read. */
export function openCounts(rows: ReadonlyArray<{ kind: string; open: number | string }>): Record<IssueKind, number> {
  const counts = Object.fromEntries(ISSUE_KINDS.map((kind) => [kind, 0])) as Record<IssueKind, number>;
  for (const row of rows)
    if ((ISSUE_KINDS as readonly string[]).includes(row.kind)) counts[row.kind as IssueKind] = Number(row.open);
  return counts;
}
