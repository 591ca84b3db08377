import type { Issue, IssueChange } from '../issues/issue-signals.js';

/**
 * The reserved source that notifications are stored under (docs/alerts.md
 * "Notifications"): each is a delivery of it, so that the inbox shows it and
 * it can be sent again. No sender may post to it, and the config file may
 * not name it.
 */
export const ISSUES_SOURCE = 'reception:issues';

/** An issue as a notification carries it: times as RFC 3339 text (CONTRACT 11). */
export interface IssueEventIssue {
  id: string;
  kind: Issue['kind'];
  subject: string;
  status: Issue['status'];
  count: number;
  firstAt: string;
  lastAt: string;
  resolvedAt: string | null;
  lastError: string | null;
}

/** The JSON event a notify destination receives: `{ type, issue }`. */
export interface IssueEvent {
  type: IssueChange['type'];
  issue: IssueEventIssue;
}

export function issueEvent({ type, issue }: IssueChange): IssueEvent {
  return {
    type,
    issue: {
      id: issue.id,
      kind: issue.kind,
      subject: issue.subject,
      status: issue.status,
      count: issue.count,
      firstAt: new Date(issue.firstAt).toISOString(),
      lastAt: new Date(issue.lastAt).toISOString(),
      resolvedAt: issue.resolvedAt === null ? null : new Date(issue.resolvedAt).toISOString(),
      lastError: issue.lastError,
    },
  };
}
