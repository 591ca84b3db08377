import type { IssueKind, IssueSignals } from '../issues/issue-signals.js';

/** The kinds whose subject is a destination. */
const ABOUT_A_DESTINATION: ReadonlySet<IssueKind> = new Set(['destination_down', 'dead_letters', 'backlog']);

/**
 * Signals that never open an issue about a notify destination (CONTRACT 11:
 * failures to notify never open an issue about the notification destination
 * itself): `destination_down`, `dead_letters` and `backlog` of a name that
 * `names` has (read at each call, so that a reload's names apply at once) go
 * nowhere; everything else goes on to `signals`. Its notifications still
 * dead-letter and show in the inbox. `cleared` always goes on: an issue
 * opened before the destination was named in `alerts.notify` still resolves.
 */
export function withoutNotifyDestinations(signals: IssueSignals, names: { has(name: string): boolean }): IssueSignals {
  return {
    occurred(kind, subject, error) {
      if (!(ABOUT_A_DESTINATION.has(kind) && names.has(subject))) signals.occurred(kind, subject, error);
    },
    cleared(kind, subject) {
      signals.cleared(kind, subject);
    },
  };
}
