import type { Static } from 'typebox';
import type { IssueSchema } from '../issues/issue-schemas.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeForTerminal, escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { ApiClient, ApiError, isRecord, malformed } from './api-client.js';
import { exitQuietlyOnClosedPipe, flushOut, writeErr, writeOut } from './process-io.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { alignColumns, formatAge } from './table.js';
import { booleanFlag, CliError, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

const STATUSES = ['open', 'resolved'] as const;
type IssueStatus = (typeof STATUSES)[number];

/** One issue of `GET /api/issues`, as the server wrote it (kind and status passed on as strings). */
export type IssueRow = Omit<Static<typeof IssueSchema>, 'kind' | 'status'> & { kind: string; status: string };

export const issuesSpec: CommandSpec = {
  name: 'issues',
  summary: 'show what is wrong (failing destinations, dead letters, backlogs, signatures, transforms), and resolve an issue',
  usage: [
    'issues [--status open|resolved] [--json] [--url URL] [--token TOKEN]',
    'issues resolve <id> [--url URL] [--token TOKEN]',
  ],
  description:
    'Without an action, prints one line per issue (GET /api/issues), newest first: its id, kind (destination_down, ' +
    'dead_letters, backlog, verification_failing, transform_failing), subject (the destination, source or transform), ' +
    'status, how many occurrences it counted, when it opened and last occurred (ago), and the last error. An issue ' +
    'resolves by itself when its cause clears; "resolve <id>" resolves one by hand (one already resolved is fine). ' +
    'An unknown id is an error (exit 1). See docs/alerts.md.',
  flags: [
    { name: 'status', type: 'string', value: 'S', help: 'Only the open, or only the resolved, issues (both when absent).' },
    { name: 'json', type: 'boolean', help: 'Print each issue as one line of JSON (NDJSON) instead.' },
    ...SERVER_FLAGS,
  ],
  positionals: 2,
  examples: [
    'reception issues --status open',
    'reception issues resolve 019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d44',
    'reception issues --json',
  ],
};

export async function runIssues(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(issuesSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(issuesSpec));
    return 0;
  }
  const [action, id] = positionals;
  if (action !== undefined) {
    if (action !== 'resolve') {
      const near = nearestWithin(action, ['resolve'], 3);
      throw new UsageError(
        `unknown action "${escapeForTerminal(action)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}: ` +
          'reception issues lists them; "resolve <id>" resolves one.',
      );
    }
    if (id === undefined || id === '')
      throw new UsageError('which issue? reception issues resolve <id> (reception issues lists the ids).');
    const others = ['status', 'json'].filter((name) => values[name] !== undefined);
    if (others.length > 0) throw new UsageError(`--${others.join(', --')} goes with the list, not with resolve.`);
    await resolveIssue(new ApiClient(serverTarget(values)), id);
    process.stdout.write(`Resolved ${escapeForTerminal(id)}.\n`);
    return 0;
  }
  const status = statusFlag(stringFlag(values, 'status'));
  const json = booleanFlag(values, 'json');
  const api = new ApiClient(serverTarget(values));
  exitQuietlyOnClosedPipe();
  const rows: IssueRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await issuePage(api, status, cursor);
    for (const issue of page.items) {
      if (json) await writeOut(`${escapeJsonForTerminal(JSON.stringify(issue))}\n`);
      rows.push(issue);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  if (!json && rows.length > 0) {
    const now = Date.now();
    await writeOut(`${alignColumns([ISSUE_HEADER, ...rows.map((issue) => issueCells(issue, now))]).join('\n')}\n`);
  }
  await flushOut();
  if (rows.length === 0) writeErr(status === 'open' ? 'No open issues.' : 'No issues.');
  return 0;
}

/** A --status value, with the one meant when it is a near miss. */
function statusFlag(text: string | undefined): IssueStatus | undefined {
  if (text === undefined) return undefined;
  const status = STATUSES.find((s) => s === text);
  if (status !== undefined) return status;
  const near = nearestWithin(text, STATUSES, 3);
  throw new UsageError(
    `--status: expected open or resolved, got "${escapeForTerminal(text)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}.`,
  );
}

async function resolveIssue(api: ApiClient, id: string): Promise<void> {
  try {
    await api.call(`/api/issues/${encodeURIComponent(id)}/resolve`, { method: 'POST' });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404)
      throw new CliError(`no issue has the id "${escapeForTerminal(id)}": reception issues lists them.`);
    throw error;
  }
}

const PATH = '/api/issues';
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

async function issuePage(
  api: ApiClient,
  status: IssueStatus | undefined,
  cursor: string | undefined,
): Promise<{ items: IssueRow[]; nextCursor: string | null }> {
  const query = new URLSearchParams({ limit: '500' });
  if (status !== undefined) query.set('status', status);
  if (cursor !== undefined) query.set('cursor', cursor);
  const body = await api.call(`${PATH}?${query.toString()}`);
  if (!isRecord(body) || !Array.isArray(body.items)) throw malformed(PATH);
  return {
    items: body.items.filter(isRecord).map((item) => ({
      id: String(item.id),
      kind: String(item.kind),
      subject: String(item.subject),
      status: String(item.status),
      count: typeof item.count === 'number' ? item.count : 0,
      firstAt: String(item.firstAt),
      lastAt: String(item.lastAt),
      resolvedAt: text(item.resolvedAt),
      lastError: text(item.lastError),
    })),
    nextCursor: text(body.nextCursor),
  };
}

/** The table's header: the cells of {@link issueCells}, in order. */
export const ISSUE_HEADER = ['ID', 'KIND', 'SUBJECT', 'STATUS', 'COUNT', 'OPENED', 'LAST', 'LAST ERROR'];

/** The cells of one issue's line, escaped for the terminal. */
export function issueCells(issue: IssueRow, now: number): string[] {
  const ago = (iso: string): string => {
    const at = Date.parse(iso);
    return Number.isNaN(at) ? '-' : `${formatAge(now - at)} ago`;
  };
  return [
    escapeForTerminal(issue.id),
    escapeForTerminal(issue.kind),
    escapeForTerminal(issue.subject),
    issue.status === 'resolved' && issue.resolvedAt !== null
      ? `resolved ${ago(issue.resolvedAt)}`
      : escapeForTerminal(issue.status),
    String(issue.count),
    ago(issue.firstAt),
    ago(issue.lastAt),
    issue.lastError === null ? '-' : escapeForTerminal(issue.lastError),
  ];
}
