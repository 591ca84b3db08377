// An issue's expanded row in the Issues panel (issues-view.ts): its whole
// history (opened, last occurrence, count, resolved, the last error), then
// what it concerns (issue-concerns.ts), and for dead letters the Destinations
// panel's "Retry all failed". Read when expanded and at each refresh of the
// panel; drawn again only when what it shows changed (a link stays put).

import { Unauthorized } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { formatTime, relativeTime, timeTitle } from './format.ts';
import { retryFailed } from './forwarding-api.ts';
import { issueConcerns, type ConcernLinks } from './issue-concerns.ts';
import type { IssueInfo } from './issues-api.ts';
import { toast } from './toast.ts';

/** A time written out, then how long ago (kept fresh by the panel), the ISO value on hover. */
function when(iso: string): HTMLElement {
  return h(
    'span',
    { class: 'when' },
    h('time', { attrs: { datetime: iso, title: timeTitle(iso) } }, formatTime(iso)),
    ' (',
    h('span', { attrs: { 'data-relative': iso } }, relativeTime(iso)),
    ')',
  );
}

/** What tells one state of an issue from another: when it changes, the history is read again. */
export function historyKey(issue: IssueInfo): string {
  return `${issue.status}|${issue.count}|${issue.lastAt}|${issue.resolvedAt ?? ''}`;
}

export class IssueHistory {
  readonly element: HTMLElement;
  private readonly concerns: HTMLElement;
  private generation = 0;
  /** What the shown concerns were drawn from. */
  private drawn: string | undefined;

  constructor(
    private issue: IssueInfo,
    private readonly links: ConcernLinks,
  ) {
    this.concerns = h('div', { class: 'issue-concerns-slot' });
    this.element = h('div', { class: 'issue-history' });
    this.show(issue);
  }

  /** Shows the issue as it is now and reads what it concerns again. */
  show(issue: IssueInfo): void {
    this.issue = issue;
    replaceChildren(this.element, this.historyList(issue), this.actions(issue), this.concerns);
    void this.refresh();
  }

  private historyList(issue: IssueInfo): HTMLElement {
    const occurrences = `${issue.count.toLocaleString()} ${issue.count === 1 ? 'occurrence' : 'occurrences'}`;
    const item = (label: string, ...value: Array<Node | string>): HTMLElement[] => [h('dt', {}, label), h('dd', {}, ...value)];
    return h(
      'dl',
      { class: 'issue-history-line', attrs: { 'data-history': '' } },
      ...item('Opened', when(issue.firstAt)),
      ...item('Last occurrence', when(issue.lastAt)),
      ...item('Count', occurrences),
      ...(issue.resolvedAt === null ? item('Status', 'open') : item('Resolved', when(issue.resolvedAt))),
      ...item('Last error', h('span', { class: 'last-error' }, issue.lastError ?? '—')),
    );
  }

  private actions(issue: IssueInfo): HTMLElement | string {
    if (issue.kind !== 'dead_letters') return '';
    return h(
      'p',
      { class: 'issue-actions' },
      button('Retry all failed', () => void this.retry(), 'button', {
        'data-action': 'retry-failed',
        'aria-label': `Retry all failed forwards to ${issue.subject}`,
      }),
    );
  }

  private async retry(): Promise<void> {
    const destination = this.issue.subject;
    try {
      const retried = await retryFailed(destination);
      toast(`Retrying ${retried} failed ${retried === 1 ? 'forward' : 'forwards'} to ${destination}.`);
    } catch (error) {
      if (!(error instanceof Unauthorized)) toast((error as Error).message, 'error');
    }
    await this.refresh();
  }

  /** Reads what the issue concerns again; draws it when it changed. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    if (this.concerns.childElementCount === 0) replaceChildren(this.concerns, h('p', { class: 'muted' }, 'Loading…'));
    let shown: { key: string; element: HTMLElement };
    try {
      shown = await issueConcerns(this.issue, this.links);
    } catch (error) {
      if (error instanceof Unauthorized) return;
      const message = `Could not read what this issue concerns: ${(error as Error).message}`;
      shown = { key: `error|${message}`, element: h('p', { class: 'error' }, message) };
    }
    if (generation !== this.generation || shown.key === this.drawn) return;
    this.drawn = shown.key;
    replaceChildren(this.concerns, shown.element);
  }
}
