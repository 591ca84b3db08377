import type { PostgresRunner } from '../platform/db/postgres/runner.js';
import { holdable } from '../platform/db/postgres/text-values.js';
import type { Issue, IssueKind } from './issue-signals.js';
import {
  AFTER_EVERY_ID,
  ISSUE_COLUMNS,
  issueFromRow,
  openCounts,
  type Counted,
  type IssueQuery,
  type IssueRow,
  type IssueStore,
  type Occurrences,
  type ResolveOutcome,
} from './issue-store.js';

/**
 * Opens or counts in one statement. The partial unique index issues_open
 * decides between them, for every instance at once; `xmax = 0` is true for
 * a row this statement inserted, false for one it updated: so exactly one
 * instance learns that the issue opened.
 */
const OCCUR = `INSERT INTO issues AS i (id, kind, subject, status, count, first_at, last_at, resolved_at, last_error)
  VALUES ($1, $2, $3, 'open', $4, $5, $6, NULL, $7)
  ON CONFLICT (kind, subject) WHERE status = 'open' DO UPDATE SET
    count = i.count + excluded.count,
    last_at = greatest(i.last_at, excluded.last_at),
    last_error = coalesce(excluded.last_error, i.last_error)
  RETURNING ${ISSUE_COLUMNS}, (xmax = 0) AS inserted`;

/** Under READ COMMITTED a second instance's UPDATE waits for the first, sees the row resolved, and changes nothing. */
const RESOLVE = `UPDATE issues SET status = 'resolved', resolved_at = $3
  WHERE kind = $1 AND subject = $2 AND status = 'open' RETURNING ${ISSUE_COLUMNS}`;
const RESOLVE_ID = `UPDATE issues SET status = 'resolved', resolved_at = $2 WHERE id = $1 AND status = 'open' RETURNING ${ISSUE_COLUMNS}`;
const RESOLVE_QUIET = `UPDATE issues SET status = 'resolved', resolved_at = $3
  WHERE status = 'open' AND kind = ANY($1::text[]) AND last_at < $2 RETURNING ${ISSUE_COLUMNS}`;
const GET = `SELECT ${ISSUE_COLUMNS} FROM issues WHERE id = $1`;
const LIST_ALL = `SELECT ${ISSUE_COLUMNS} FROM issues WHERE id < $1 ORDER BY id DESC LIMIT $2`;
const LIST_STATUS = `SELECT ${ISSUE_COLUMNS} FROM issues WHERE status = $3 AND id < $1 ORDER BY id DESC LIMIT $2`;
const COUNT_OPEN = `SELECT kind, count(*) AS open FROM issues WHERE status = 'open' GROUP BY kind`;

/** The issues on PostgreSQL (migration 000014): each write one statement, whose answer tells whether it made a transition. */
export class PostgresIssues implements IssueStore {
  constructor(private readonly db: PostgresRunner) {}

  async occur(o: Occurrences, newId: string): Promise<Counted> {
    const result = await this.db.execute<IssueRow & { inserted: boolean }>(OCCUR, [
      newId,
      o.kind,
      o.subject,
      o.count,
      o.firstAt,
      o.lastAt,
      o.lastError,
    ]);
    const row = result.rows[0];
    if (row === undefined) throw new Error('the issues table did not return the row it wrote');
    return { issue: issueFromRow(row), opened: row.inserted };
  }

  async resolve(kind: IssueKind, subject: string, at: number): Promise<Issue | null> {
    if (!holdable(subject)) return null;
    const row = (await this.db.execute<IssueRow>(RESOLVE, [kind, subject, at])).rows[0];
    return row === undefined ? null : issueFromRow(row);
  }

  async resolveById(id: string, at: number): Promise<ResolveOutcome> {
    if (!holdable(id)) return { status: 'not_found' };
    const row = (await this.db.execute<IssueRow>(RESOLVE_ID, [id, at])).rows[0];
    if (row !== undefined) return { status: 'resolved', issue: issueFromRow(row) };
    return (await this.get(id)) === null ? { status: 'not_found' } : { status: 'already_resolved' };
  }

  async resolveQuiet(kinds: readonly IssueKind[], before: number, at: number): Promise<Issue[]> {
    if (kinds.length === 0) return [];
    return (await this.db.execute<IssueRow>(RESOLVE_QUIET, [kinds, before, at])).rows.map(issueFromRow);
  }

  async list(query: IssueQuery): Promise<Issue[]> {
    const before = query.beforeId ?? AFTER_EVERY_ID;
    const result =
      query.status === undefined
        ? await this.db.execute<IssueRow>(LIST_ALL, [before, query.limit])
        : await this.db.execute<IssueRow>(LIST_STATUS, [before, query.limit, query.status]);
    return result.rows.map(issueFromRow);
  }

  async get(id: string): Promise<Issue | null> {
    if (!holdable(id)) return null;
    const row = (await this.db.execute<IssueRow>(GET, [id])).rows[0];
    return row === undefined ? null : issueFromRow(row);
  }

  async countOpen(): Promise<Record<IssueKind, number>> {
    return openCounts((await this.db.execute<{ kind: string; open: string }>(COUNT_OPEN)).rows);
  }
}
