import type { IssueKind } from './issue-signals.js';
import type { Occurrences } from './issue-store.js';

/** Signals of one kind and subject, in the order they came: occurrences next to each other are summed into one. */
export type Signal = ({ type: 'occurred' } & Occurrences) | { type: 'cleared'; kind: IssueKind; subject: string; at: number };

/**
 * The signals not yet written, per kind and subject. A burst of
 * occurrences is one entry (count, first and last time, last error); a
 * clear between occurrences is kept in its place, since it resolves the
 * issue they counted on and the next ones open a new one.
 */
export class PendingSignals {
  private signals = new Map<string, Signal[]>();

  get size(): number {
    return this.signals.size;
  }

  occurred(kind: IssueKind, subject: string, at: number, error: string | null): void {
    const list = this.listOf(kind, subject);
    const last = list.at(-1);
    if (last?.type === 'occurred') {
      last.count++;
      last.lastAt = Math.max(last.lastAt, at);
      if (error !== null) last.lastError = error;
      return;
    }
    list.push({ type: 'occurred', kind, subject, count: 1, firstAt: at, lastAt: at, lastError: error });
  }

  cleared(kind: IssueKind, subject: string, at: number): void {
    const list = this.listOf(kind, subject);
    if (list.at(-1)?.type === 'cleared') return;
    list.push({ type: 'cleared', kind, subject, at });
  }

  /** Everything pending, and the list is empty again. */
  take(): Map<string, Signal[]> {
    const taken = this.signals;
    this.signals = new Map();
    return taken;
  }

  /** Signals that could not be written go back in front of those that came since (summed where they meet). */
  putBack(key: string, signals: Signal[]): void {
    const later = this.signals.get(key) ?? [];
    const merged = [...signals];
    for (const signal of later) {
      const last = merged.at(-1);
      if (last?.type === 'occurred' && signal.type === 'occurred') {
        last.count += signal.count;
        last.lastAt = Math.max(last.lastAt, signal.lastAt);
        last.lastError = signal.lastError ?? last.lastError;
      } else if (!(last?.type === 'cleared' && signal.type === 'cleared')) {
        merged.push(signal);
      }
    }
    this.signals.set(key, merged);
  }

  private listOf(kind: IssueKind, subject: string): Signal[] {
    const key = `${kind}\u0000${subject}`;
    let list = this.signals.get(key);
    if (list === undefined) {
      list = [];
      this.signals.set(key, list);
    }
    return list;
  }
}
