import type { Database } from '../platform/db/sqlite/driver.js';
import type { Issue, IssueKind } from './issue-signals.js';
import {
  ISSUE_COLUMNS,
  issueFromRow,
  openCounts,
  type Counted,
  type IssueQuery,
  type IssueRow,
  type IssueStore,
  type Occurrences,
  type ResolveOutcome,
  AFTER_EVERY_ID,
} from './issue-store.js';

/**
 * The issues on SQLite (migration 000013), on the inbox's connection. Each
 * write is one IMMEDIATE transaction that reads the open issue and writes
 * it: what it found says whether this write opened or resolved it, even
 * with another process on the same file.
 */
export class SqliteIssues implements IssueStore {
  private readonly q;
  private readonly occurAll: (o: Occurrences, newId: string) => Counted;
  private readonly resolveOne: (kind: string, subject: string, at: number) => Issue | null;
  private readonly resolveIdOne: (id: string, at: number) => ResolveOutcome;
  private readonly resolveQuietAll: (kinds: string, before: number, at: number) => Issue[];

  constructor(db: Database) {
    const q = {
      open: db.prepare<[string, string], IssueRow>(
        `SELECT ${ISSUE_COLUMNS} FROM issues WHERE kind = ? AND subject = ? AND status = 'open'`,
      ),
      insert: db.prepare<[string, string, string, number, number, number, string | null], IssueRow>(
        `INSERT INTO issues (id, kind, subject, status, count, first_at, last_at, resolved_at, last_error)
         VALUES (?, ?, ?, 'open', ?, ?, ?, NULL, ?) RETURNING ${ISSUE_COLUMNS}`,
      ),
      count: db.prepare<[number, number, string | null, string], IssueRow>(
        `UPDATE issues SET count = count + ?, last_at = max(last_at, ?), last_error = coalesce(?, last_error)
         WHERE id = ? RETURNING ${ISSUE_COLUMNS}`,
      ),
      resolveId: db.prepare<[number, string], IssueRow>(
        `UPDATE issues SET status = 'resolved', resolved_at = ? WHERE id = ? AND status = 'open' RETURNING ${ISSUE_COLUMNS}`,
      ),
      resolveQuiet: db.prepare<[number, string, number], IssueRow>(
        `UPDATE issues SET status = 'resolved', resolved_at = ?
         WHERE status = 'open' AND kind IN (SELECT value FROM json_each(?)) AND last_at < ? RETURNING ${ISSUE_COLUMNS}`,
      ),
      get: db.prepare<[string], IssueRow>(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE id = ?`),
      listAll: db.prepare<[string, number], IssueRow>(
        `SELECT ${ISSUE_COLUMNS} FROM issues WHERE id < ? ORDER BY id DESC LIMIT ?`,
      ),
      listStatus: db.prepare<[string, string, number], IssueRow>(
        `SELECT ${ISSUE_COLUMNS} FROM issues WHERE status = ? AND id < ? ORDER BY id DESC LIMIT ?`,
      ),
      countOpen: db.prepare<[], { kind: string; open: number }>(
        `SELECT kind, count(*) AS open FROM issues WHERE status = 'open' GROUP BY kind`,
      ),
    };
    this.q = q;
    this.occurAll = immediate(db, (o: Occurrences, newId: string): Counted => {
      const open = q.open.get(o.kind, o.subject);
      if (open === undefined) {
        const row = q.insert.get(newId, o.kind, o.subject, o.count, o.firstAt, o.lastAt, o.lastError);
        return { issue: issueFromRow(must(row)), opened: true };
      }
      return { issue: issueFromRow(must(q.count.get(o.count, o.lastAt, o.lastError, open.id))), opened: false };
    });
    this.resolveOne = immediate(db, (kind: string, subject: string, at: number): Issue | null => {
      const open = q.open.get(kind, subject);
      if (open === undefined) return null;
      const row = q.resolveId.get(at, open.id);
      return row === undefined ? null : issueFromRow(row);
    });
    this.resolveIdOne = immediate(db, (id: string, at: number): ResolveOutcome => {
      const row = q.resolveId.get(at, id);
      if (row !== undefined) return { status: 'resolved', issue: issueFromRow(row) };
      return q.get.get(id) === undefined ? { status: 'not_found' } : { status: 'already_resolved' };
    });
    this.resolveQuietAll = immediate(db, (kinds: string, before: number, at: number): Issue[] =>
      q.resolveQuiet.all(at, kinds, before).map(issueFromRow),
    );
  }

  async occur(occurrences: Occurrences, newId: string): Promise<Counted> {
    return this.occurAll(occurrences, newId);
  }

  async resolve(kind: IssueKind, subject: string, at: number): Promise<Issue | null> {
    return this.resolveOne(kind, subject, at);
  }

  async resolveById(id: string, at: number): Promise<ResolveOutcome> {
    return this.resolveIdOne(id, at);
  }

  async resolveQuiet(kinds: readonly IssueKind[], before: number, at: number): Promise<Issue[]> {
    if (kinds.length === 0) return [];
    return this.resolveQuietAll(JSON.stringify(kinds), before, at);
  }

  async list(query: IssueQuery): Promise<Issue[]> {
    const before = query.beforeId ?? AFTER_EVERY_ID;
    const rows =
      query.status === undefined
        ? this.q.listAll.all(before, query.limit)
        : this.q.listStatus.all(query.status, before, query.limit);
    return rows.map(issueFromRow);
  }

  async get(id: string): Promise<Issue | null> {
    const row = this.q.get.get(id);
    return row === undefined ? null : issueFromRow(row);
  }

  async countOpen(): Promise<Record<IssueKind, number>> {
    return openCounts(this.q.countOpen.all());
  }
}

/** `work` in an IMMEDIATE transaction: the write lock is taken before the read that decides the write. */
function immediate<A extends unknown[], R>(db: Database, work: (...args: A) => R): (...args: A) => R {
  const transaction = db.transaction(work);
  return (...args: A) => transaction.immediate(...args);
}

function must(row: IssueRow | undefined): IssueRow {
  if (row === undefined) throw new Error('the issues table did not return the row it wrote');
  return row;
}
