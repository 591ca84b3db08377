import type { IssueKind, IssueSignals } from '../../src/issues/issue-signals.js';

/** One call a part made to the issues feature. */
export interface SignalCall {
  call: 'occurred' | 'cleared';
  kind: IssueKind;
  subject: string;
  error: string | null;
}

/**
 * IssueSignals that only record their calls, in order: what the causes of
 * issues told the tracker (the tracker itself is another part). Not a store:
 * the store, HTTP and destinations in the tests stay real.
 */
export class RecordingSignals implements IssueSignals {
  readonly calls: SignalCall[] = [];

  occurred(kind: IssueKind, subject: string, error: string | null): void {
    this.calls.push({ call: 'occurred', kind, subject, error });
  }

  cleared(kind: IssueKind, subject: string): void {
    this.calls.push({ call: 'cleared', kind, subject, error: null });
  }

  /** The calls of that kind (and subject, when given). */
  of(kind: IssueKind, subject?: string, call?: SignalCall['call']): SignalCall[] {
    return this.calls.filter(
      (c) => c.kind === kind && (subject === undefined || c.subject === subject) && (call === undefined || c.call === call),
    );
  }

  occurrences(kind: IssueKind, subject?: string): number {
    return this.of(kind, subject, 'occurred').length;
  }

  /** Every call about `subject`, as `kind:call` text (for a message that says what happened). */
  about(subject: string): string[] {
    return this.calls.filter((c) => c.subject === subject).map((c) => `${c.kind}:${c.call}`);
  }
}
