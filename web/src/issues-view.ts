// The issues: the top bar's button says how many are open (nothing at 0),
// and opens a panel that lists them: what kind, about which destination or
// source (a link to it), how many occurrences, since when, the last error
// (text from outside: shown as text), and a Resolve button for each. The
// count is refreshed every 5 s while the tab is visible, the panel every 2 s
// while it is open.

import { Unauthorized } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { formatTime, relativeTime, timeTitle } from './format.ts';
import { openIssues, resolveIssue, type IssueInfo } from './issues-api.ts';
import { Poller } from './poller.ts';
import { toast } from './toast.ts';

const COUNT_MS = 5000;
const PANEL_MS = 2000;

const KIND_LABELS: Record<IssueInfo['kind'], string> = {
  destination_down: 'Destination down',
  dead_letters: 'Dead letters',
  backlog: 'Backlog',
  verification_failing: 'Signatures failing',
  transform_failing: 'Transform failing',
};

export interface IssuesViewOptions {
  /** Where a source's link goes (the inbox filtered to it). */
  sourceHref: (source: string) => string;
  /** Shows a destination (the Destinations panel). */
  showDestination: (name: string) => void;
}

export class IssuesView {
  /** The top bar's button that opens and closes the panel, with the open count. */
  readonly toggle: HTMLButtonElement;
  readonly element: HTMLElement;
  private readonly count: HTMLElement;
  private readonly countWord: HTMLElement;
  private readonly body: HTMLElement;
  private readonly problem: HTMLElement;
  private countPoller: Poller | undefined;
  private panelPoller: Poller | undefined;
  private shown = '';

  constructor(private readonly options: IssuesViewOptions) {
    this.count = h('span', { class: 'issue-count', attrs: { hidden: '' } });
    // Read out after the count ("Issues 3 open"); not drawn.
    this.countWord = h('span', { class: 'visually-hidden', attrs: { hidden: '' } }, ' open');
    this.toggle = h(
      'button',
      {
        class: 'button quiet issues-toggle',
        attrs: { type: 'button', 'data-action': 'issues', 'aria-expanded': 'false', 'aria-controls': 'issues-panel' },
        on: { click: () => (this.isOpen ? this.close() : this.open()) },
      },
      'Issues',
      this.count,
      this.countWord,
    );
    this.body = h('div', { class: 'issues-body' }, h('p', { class: 'muted' }, 'Loading…'));
    this.problem = h('p', { class: 'error', attrs: { hidden: '' } });
    this.element = h(
      'aside',
      { class: 'destinations-panel issues-panel', attrs: { id: 'issues-panel', 'aria-label': 'Open issues', hidden: '' } },
      h(
        'div',
        { class: 'section-head' },
        h('h2', {}, 'Open issues'),
        button('Close', () => this.close(), 'button quiet', { 'data-action': 'close-issues' }),
      ),
      h(
        'p',
        { class: 'muted' },
        'An issue resolves by itself when its cause clears; resolve one by hand once it is dealt with. A new occurrence opens a new issue.',
      ),
      this.problem,
      this.body,
    );
    this.element.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.close();
        this.toggle.focus();
      }
    });
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  /** Starts counting the open issues for the top bar. */
  start(): void {
    this.countPoller?.stop();
    this.countPoller = new Poller(
      () => this.refreshCount(),
      COUNT_MS,
      () => this.toggle.isConnected,
    ).start();
  }

  stop(): void {
    this.countPoller?.stop();
    this.countPoller = undefined;
    this.close();
  }

  open(): void {
    this.element.hidden = false;
    this.toggle.setAttribute('aria-expanded', 'true');
    this.panelPoller?.stop();
    this.panelPoller = new Poller(
      () => this.refreshPanel(),
      PANEL_MS,
      () => this.isOpen && this.element.isConnected,
    ).start();
  }

  close(): void {
    this.element.hidden = true;
    this.toggle.setAttribute('aria-expanded', 'false');
    this.panelPoller?.stop();
    this.panelPoller = undefined;
  }

  private async refreshCount(): Promise<void> {
    const { items, more } = await openIssues();
    this.showCount(items.length, more);
  }

  /** The button's count: none at 0 (the button stays, neutral: "Issues"), else the number ("Issues 3 open" to a screen reader). */
  private showCount(open: number, more: boolean): void {
    const text = more ? `${open}+` : String(open);
    this.count.hidden = open === 0;
    this.countWord.hidden = open === 0;
    this.count.textContent = open === 0 ? '' : text;
    this.toggle.dataset.open = String(open);
    this.toggle.classList.toggle('has-issues', open > 0);
  }

  private async refreshPanel(): Promise<void> {
    let page: Awaited<ReturnType<typeof openIssues>>;
    try {
      page = await openIssues();
    } catch (error) {
      if (error instanceof Unauthorized) throw error;
      this.problem.textContent = `Could not read the issues: ${(error as Error).message}`;
      this.problem.hidden = false;
      return;
    }
    this.problem.hidden = true;
    this.showCount(page.items.length, page.more);
    const text = JSON.stringify(page.items);
    if (text !== this.shown) {
      this.shown = text;
      replaceChildren(
        this.body,
        page.items.length === 0
          ? h('p', { class: 'muted', attrs: { 'data-empty': '' } }, 'No open issues: nothing needs a look.')
          : this.table(page.items),
      );
    }
    for (const time of this.body.querySelectorAll<HTMLElement>('[data-relative]')) {
      time.textContent = relativeTime(time.dataset.relative ?? '');
    }
  }

  private table(issues: IssueInfo[]): HTMLElement {
    const head = ['Kind', 'About', 'Count', 'First', 'Last', 'Last error', 'Actions'];
    return h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { class: 'kv-table destinations-table issues-table' },
        h('thead', {}, h('tr', {}, ...head.map((label) => h('th', { attrs: { scope: 'col' } }, label)))),
        h('tbody', {}, ...issues.map((issue) => this.row(issue))),
      ),
    );
  }

  private row(issue: IssueInfo): HTMLElement {
    const cell = (label: string, className: string, ...content: Array<Node | string>): HTMLElement =>
      h('td', { class: className, attrs: { 'data-label': label } }, ...content);
    const time = (iso: string): HTMLElement =>
      h('time', { attrs: { datetime: iso, title: timeTitle(iso), 'data-relative': iso } }, relativeTime(iso));
    return h(
      'tr',
      { attrs: { 'data-issue': issue.id, 'data-kind': issue.kind } },
      h('th', { attrs: { scope: 'row' } }, KIND_LABELS[issue.kind]),
      cell('About', 'subject', this.subject(issue)),
      cell('Count', 'count', issue.count.toLocaleString()),
      cell('First', 'first', time(issue.firstAt)),
      cell('Last', 'last', time(issue.lastAt)),
      cell('Last error', 'last-error', issue.lastError ?? '—'),
      cell(
        '',
        'actions-cell',
        button('Resolve', () => void this.resolve(issue), 'button', {
          'data-action': 'resolve-issue',
          'aria-label': `Resolve: ${KIND_LABELS[issue.kind]}, ${issue.subject}`,
        }),
      ),
    );
  }

  /** What the issue is about: a destination (opens the Destinations panel), a source (the inbox of it), or a transform (its name). */
  private subject(issue: IssueInfo): HTMLElement {
    if (issue.kind === 'verification_failing') {
      return h(
        'a',
        { attrs: { href: this.options.sourceHref(issue.subject), 'data-source': '' }, on: { click: () => this.close() } },
        'source ',
        issue.subject,
      );
    }
    if (issue.kind === 'transform_failing') return h('span', {}, 'transform ', h('code', {}, issue.subject));
    return h(
      'a',
      {
        attrs: { href: '#', 'data-destination-link': '' },
        on: {
          click: (event) => {
            event.preventDefault();
            this.close();
            this.options.showDestination(issue.subject);
          },
        },
      },
      'destination ',
      issue.subject,
    );
  }

  private async resolve(issue: IssueInfo): Promise<void> {
    try {
      await resolveIssue(issue.id);
      toast(`Resolved: ${KIND_LABELS[issue.kind]}, ${issue.subject} (opened ${formatTime(issue.firstAt)}).`);
    } catch (error) {
      if (!(error instanceof Unauthorized)) toast((error as Error).message, 'error');
    }
    this.panelPoller?.now();
  }
}
