// The issues: the top bar's button says how many are open (nothing at 0),
// and opens a panel that lists them, the open ones or (a toggle) the
// resolved ones: what kind, about which destination or source (a link to
// it), how many occurrences, since when, the last error (text from outside:
// shown as text), and a Resolve button for each open one. Each row expands
// (its kind is a disclosure button) to the issue's history and the
// deliveries it concerns (issue-history.ts). The count is refreshed every
// 5 s while the tab is visible, the panel every 2 s while it is open.

import { Unauthorized } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { formatTime, relativeTime } from './format.ts';
import type { ConcernLinks } from './issue-concerns.ts';
import { timeElement } from './issue-concerns.ts';
import { historyKey, IssueHistory } from './issue-history.ts';
import { listIssues, resolveIssue, type IssueInfo } from './issues-api.ts';
import { Poller } from './poller.ts';
import { SidePanel } from './side-panel.ts';
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
  /** Where a delivery's link goes (its detail). */
  deliveryHref: (deliveryId: string) => string;
  /** Where the inbox of a source's deliveries that failed verification is. */
  failedVerificationHref: (source: string) => string;
  /** Opens the Refused view on a source's refusals. */
  showRefusals: (source: string) => void;
}

type IssueStatus = IssueInfo['status'];

export class IssuesView {
  /** The top bar's button that opens and closes the panel, with the open count. */
  readonly toggle: HTMLButtonElement;
  readonly element: HTMLElement;
  private readonly count: HTMLElement;
  private readonly countWord: HTMLElement;
  private readonly body: HTMLElement;
  private readonly problem: HTMLElement;
  private readonly title: HTMLElement;
  private readonly statusButtons: HTMLButtonElement[];
  private status: IssueStatus = 'open';
  /** The issues shown, and which are expanded (with their history, kept across redraws). */
  private items: IssueInfo[] = [];
  private readonly expanded = new Set<string>();
  private readonly histories = new Map<string, { key: string; view: IssueHistory }>();
  private generation = 0;
  private countPoller: Poller | undefined;
  private readonly panel: SidePanel;
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
    this.title = h('h2', { attrs: { id: 'issues-title' } }, 'Open issues');
    this.statusButtons = (['open', 'resolved'] as const).map((status) =>
      button(status === 'open' ? 'Open' : 'Resolved', () => this.showStatus(status), 'button quiet', {
        'data-show': status,
        'aria-pressed': String(status === this.status),
      }),
    );
    this.element = h(
      'aside',
      { class: 'destinations-panel issues-panel', attrs: { id: 'issues-panel', 'aria-labelledby': 'issues-title', hidden: '' } },
      h(
        'div',
        { class: 'section-head' },
        this.title,
        h('div', { class: 'issues-status', attrs: { role: 'group', 'aria-label': 'Which issues' } }, ...this.statusButtons),
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
    this.panel = new SidePanel(this.element, this.toggle, () => this.refreshPanel(), PANEL_MS);
  }

  get isOpen(): boolean {
    return this.panel.isOpen;
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
    this.panel.open();
  }

  close(): void {
    this.panel.close();
  }

  /** Shows the open, or the resolved, issues. */
  private showStatus(status: IssueStatus): void {
    if (status === this.status) return;
    this.status = status;
    this.generation++;
    this.title.textContent = status === 'open' ? 'Open issues' : 'Resolved issues';
    for (const control of this.statusButtons) control.setAttribute('aria-pressed', String(control.dataset.show === status));
    this.shown = '';
    replaceChildren(this.body, h('p', { class: 'muted' }, 'Loading…'));
    this.panel.now();
  }

  private async refreshCount(): Promise<void> {
    const { items, more } = await listIssues('open');
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
    const { status } = this;
    const generation = this.generation;
    let page: Awaited<ReturnType<typeof listIssues>>;
    try {
      page = await listIssues(status);
    } catch (error) {
      if (error instanceof Unauthorized) throw error;
      this.problem.textContent = `Could not read the issues: ${(error as Error).message}`;
      this.problem.hidden = false;
      return;
    }
    if (generation !== this.generation) return;
    this.problem.hidden = true;
    if (status === 'open') this.showCount(page.items.length, page.more);
    const text = JSON.stringify(page.items);
    if (text !== this.shown) {
      this.shown = text;
      this.items = page.items;
      this.draw();
    } else {
      // The issues are the same; what the expanded ones concern may not be (forwards retried, failed, delivered).
      for (const id of this.expanded) void this.histories.get(id)?.view.refresh();
    }
    for (const time of this.body.querySelectorAll<HTMLElement>('[data-relative]')) {
      time.textContent = relativeTime(time.dataset.relative ?? '');
    }
  }

  /** Draws the issues shown, their expanded rows kept (focus too: a redraw keeps the focused button's place). */
  private draw(): void {
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset.focusKey : undefined;
    const ids = new Set(this.items.map((issue) => issue.id));
    for (const id of this.histories.keys()) if (!ids.has(id)) this.histories.delete(id);
    replaceChildren(
      this.body,
      this.items.length === 0
        ? h(
            'p',
            { class: 'muted', attrs: { 'data-empty': '' } },
            this.status === 'open' ? 'No open issues: nothing needs a look.' : 'No resolved issues are kept.',
          )
        : this.table(this.items),
    );
    if (focused !== undefined) this.body.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
  }

  private toggleRow(issue: IssueInfo): void {
    if (this.expanded.has(issue.id)) this.expanded.delete(issue.id);
    else this.expanded.add(issue.id);
    this.draw();
  }

  /** The expanded row's content: kept while the issue is unchanged, read again when it changed. */
  private history(issue: IssueInfo): HTMLElement {
    const key = historyKey(issue);
    const kept = this.histories.get(issue.id);
    if (kept === undefined) {
      const view = new IssueHistory(issue, this.links());
      this.histories.set(issue.id, { key, view });
      return view.element;
    }
    if (kept.key !== key) {
      kept.key = key;
      kept.view.show(issue);
    }
    return kept.view.element;
  }

  private links(): ConcernLinks {
    return {
      deliveryHref: this.options.deliveryHref,
      failedVerificationHref: this.options.failedVerificationHref,
      showRefusals: (source) => {
        this.close();
        this.options.showRefusals(source);
      },
      left: () => this.close(),
    };
  }

  private table(issues: IssueInfo[]): HTMLElement {
    const last = this.status === 'open' ? 'Actions' : 'Resolved';
    const head = ['Kind', 'About', 'Count', 'First', 'Last', 'Last error', last];
    return h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { class: 'kv-table destinations-table issues-table' },
        h('thead', {}, h('tr', {}, ...head.map((label) => h('th', { attrs: { scope: 'col' } }, label)))),
        h('tbody', {}, ...issues.flatMap((issue) => this.rows(issue, head.length))),
      ),
    );
  }

  /** The issue's row, and under it its history when expanded. */
  private rows(issue: IssueInfo, columns: number): HTMLElement[] {
    const cell = (label: string, className: string, ...content: Array<Node | string>): HTMLElement =>
      h('td', { class: className, attrs: { 'data-label': label } }, ...content);
    const open = this.expanded.has(issue.id);
    const historyId = `issue-history-${issue.id}`;
    const disclosure = h(
      'button',
      {
        class: 'disclosure',
        attrs: {
          type: 'button',
          'aria-expanded': String(open),
          'aria-controls': historyId,
          'data-action': 'expand-issue',
          'data-focus-key': `expand:${issue.id}`,
        },
        on: { click: () => this.toggleRow(issue) },
      },
      KIND_LABELS[issue.kind],
    );
    const row = h(
      'tr',
      { attrs: { 'data-issue': issue.id, 'data-kind': issue.kind, 'data-status': issue.status } },
      h('th', { attrs: { scope: 'row' } }, disclosure),
      cell('About', 'subject', this.subject(issue)),
      cell('Count', 'count', issue.count.toLocaleString()),
      cell('First', 'first', timeElement(issue.firstAt)),
      cell('Last', 'last', timeElement(issue.lastAt)),
      cell('Last error', 'last-error', issue.lastError ?? '—'),
      issue.resolvedAt !== null
        ? cell('Resolved', 'resolved', timeElement(issue.resolvedAt))
        : cell(
            '',
            'actions-cell',
            button('Resolve', () => void this.resolve(issue), 'button', {
              'data-action': 'resolve-issue',
              'aria-label': `Resolve: ${KIND_LABELS[issue.kind]}, ${issue.subject}`,
            }),
          ),
    );
    if (!open) return [row];
    const history = h(
      'tr',
      { class: 'issue-history-row', attrs: { id: historyId, 'data-history-of': issue.id } },
      h('td', { attrs: { colspan: String(columns), 'data-label': '' } }, this.history(issue)),
    );
    return [row, history];
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
    this.panel.now();
  }
}
