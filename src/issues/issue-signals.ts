/**
 * What the parts that see trouble tell the issues feature (CONTRACT 11, docs/alerts.md).
 *
 * The circuit (destination_down), the outbox (dead_letters), the backlog
 * watch (backlog), verification (verification_failing) and the transforms
 * (transform_failing) each call these; the issue tracker implements them: at
 * most one open issue per kind and subject, counting occurrences, resolved
 * when its cause clears or by a person. Both calls return at once: the
 * tracker records them in its own time and never slows the caller.
 */
export const ISSUE_KINDS = ['destination_down', 'dead_letters', 'backlog', 'verification_failing', 'transform_failing'] as const;
export type IssueKind = (typeof ISSUE_KINDS)[number];

/** An issue as the API shows it (CONTRACT 11); times in ms since the epoch. */
export interface Issue {
  id: string;
  kind: IssueKind;
  /** The destination, source or transform it is about. */
  subject: string;
  status: 'open' | 'resolved';
  /** Occurrences counted on it since it opened. */
  count: number;
  firstAt: number;
  lastAt: number;
  resolvedAt: number | null;
  lastError: string | null;
}

/** An issue that opened or resolved: what a notification carries (CONTRACT 11, "Notifications"). */
export interface IssueChange {
  type: 'issue.opened' | 'issue.resolved';
  issue: Issue;
}

export interface IssueSignals {
  /** One occurrence of the cause: opens the issue of that kind and subject, or counts on the open one. */
  occurred(kind: IssueKind, subject: string, error: string | null): void;
  /** The cause has cleared: resolves the open issue of that kind and subject, if there is one. */
  cleared(kind: IssueKind, subject: string): void;
}

/** Signals that go nowhere: for a part built without the issues feature (a test, a tool). */
export const NO_ISSUE_SIGNALS: IssueSignals = {
  occurred() {},
  cleared() {},
};
