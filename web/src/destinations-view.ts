// The destinations panel: where deliveries are forwarded, its circuit (open
// in red, until when), how much waits and how much failed, the age of the oldest waiting forward and the last error;
// with pause, resume and "retry all failed" for each. Opened from the top
// bar; refreshed every 2 s while it is open and the tab is visible.

import { Unauthorized } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { listDestinations, retryFailed, setPaused, type DestinationInfo } from './forwarding-api.ts';
import { formatTime, timeTitle } from './format.ts';
import { SidePanel } from './side-panel.ts';
import { toast } from './toast.ts';

const REFRESH_MS = 2000;

export class DestinationsView {
  /** The top bar's button that opens and closes the panel. */
  readonly toggle: HTMLButtonElement;
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly problem: HTMLElement;
  private readonly panel: SidePanel;
  private shown = '';
  /** A destination to bring into view once the rows are drawn (an issue's link). */
  private revealing: string | undefined;

  constructor() {
    this.toggle = button('Destinations', () => (this.isOpen ? this.close() : this.open()), 'button quiet', {
      'data-action': 'destinations',
      'aria-expanded': 'false',
      'aria-controls': 'destinations-panel',
    });
    this.body = h('div', { class: 'destinations-body' }, h('p', { class: 'muted' }, 'Loading…'));
    this.problem = h('p', { class: 'error', attrs: { hidden: '' } });
    this.element = h(
      'aside',
      { class: 'destinations-panel', attrs: { id: 'destinations-panel', 'aria-label': 'Destinations', hidden: '' } },
      h(
        'div',
        { class: 'section-head' },
        h('h2', {}, 'Destinations'),
        button('Close', () => this.close(), 'button quiet', { 'data-action': 'close-destinations' }),
      ),
      this.problem,
      this.body,
    );
    this.panel = new SidePanel(this.element, this.toggle, () => this.refresh(), REFRESH_MS);
  }

  get isOpen(): boolean {
    return this.panel.isOpen;
  }

  open(): void {
    this.panel.open();
  }

  close(): void {
    this.panel.close();
  }

  private async refresh(): Promise<void> {
    let destinations: DestinationInfo[];
    try {
      destinations = await listDestinations();
    } catch (error) {
      if (error instanceof Unauthorized) throw error;
      this.problem.textContent = `Could not read the destinations: ${(error as Error).message}`;
      this.problem.hidden = false;
      return;
    }
    this.problem.hidden = true;
    const text = JSON.stringify(destinations);
    // The ages move on with the clock: redrawn each round, but the rows only when something changed.
    if (text !== this.shown) {
      this.shown = text;
      replaceChildren(
        this.body,
        destinations.length === 0
          ? h(
              'p',
              { class: 'muted' },
              'No destinations. Name them under "destinations" in the config file, and route sources to them with "forward".',
            )
          : this.table(destinations),
      );
    }
    for (const age of this.body.querySelectorAll<HTMLElement>('[data-since]')) age.textContent = ageText(age.dataset.since ?? '');
    if (this.revealing !== undefined) this.bringIntoView(this.revealing);
  }

  /** Opens the panel on one destination: its row is scrolled to, marked and focused. */
  reveal(name: string): void {
    this.revealing = name;
    if (!this.isOpen) this.open();
    else this.panel.now();
  }

  private bringIntoView(name: string): void {
    this.revealing = undefined;
    for (const row of this.body.querySelectorAll<HTMLElement>('tr[data-destination]')) {
      const match = row.dataset.destination === name;
      row.classList.toggle('revealed', match);
      if (!match) continue;
      const head = row.querySelector<HTMLElement>('th');
      head?.setAttribute('tabindex', '-1');
      head?.focus();
      row.scrollIntoView({ block: 'nearest' });
    }
  }

  private table(destinations: DestinationInfo[]): HTMLElement {
    const head = ['Name', 'Kind', 'URL', 'Circuit', 'Paused', 'Pending', 'Failed', 'Oldest pending', 'Last error', 'Actions'];
    return h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { class: 'kv-table destinations-table' },
        h('thead', {}, h('tr', {}, ...head.map((label) => h('th', { attrs: { scope: 'col' } }, label)))),
        h('tbody', {}, ...destinations.map((d) => this.row(d))),
      ),
    );
  }

  private row(d: DestinationInfo): HTMLElement {
    const actions = h('div', { class: 'destination-actions' });
    if (d.kind !== 'removed') {
      actions.append(
        d.paused
          ? button('Resume', () => void this.act(() => setPaused(d.name, false), `Resumed ${d.name}.`), 'button', {
              'data-action': 'resume',
            })
          : button(
              'Pause',
              () => void this.act(() => setPaused(d.name, true), `Paused ${d.name}: its forwards wait.`),
              'button',
              { 'data-action': 'pause' },
            ),
      );
    }
    if (d.failed > 0) {
      actions.append(
        button(
          'Retry all failed',
          () =>
            void this.act(async () => {
              const retried = await retryFailed(d.name);
              toast(`Retrying ${retried} failed ${retried === 1 ? 'forward' : 'forwards'} to ${d.name}.`);
            }),
          'button',
          { 'data-action': 'retry-failed' },
        ),
      );
    }
    // data-label names each cell where a phone shows the rows as cards (forwarding.css).
    const cell = (label: string, className: string, ...content: Array<Node | string>): HTMLElement =>
      h('td', { class: className, attrs: { 'data-label': label } }, ...content);
    return h(
      'tr',
      { attrs: { 'data-destination': d.name, 'data-paused': String(d.paused) } },
      h('th', { attrs: { scope: 'row' } }, d.name),
      cell('Kind', 'kind', d.kind, ...connectionText(d)),
      d.url === null ? cell('URL', 'url', '—') : urlCell(d.url),
      circuitCell(d),
      cell('Paused', 'paused', d.paused ? 'paused' : 'no'),
      cell('Pending', 'pending', d.pending.toLocaleString()),
      cell('Failed', d.failed > 0 ? 'failed bad' : 'failed', d.failed.toLocaleString()),
      cell(
        'Oldest pending',
        'oldest',
        d.oldestPendingAt === null
          ? '—'
          : h(
              'time',
              { attrs: { datetime: d.oldestPendingAt, title: timeTitle(d.oldestPendingAt), 'data-since': d.oldestPendingAt } },
              ageText(d.oldestPendingAt),
            ),
      ),
      cell(
        'Last error',
        'last-error',
        d.lastError ?? '—',
        d.lastError === null || d.lastFailureAt === null
          ? ''
          : h('span', { class: 'muted' }, ` (${formatTime(d.lastFailureAt)})`),
      ),
      cell('', 'actions-cell', actions),
    );
  }

  private async act(action: () => Promise<void>, done?: string): Promise<void> {
    try {
      await action();
      if (done !== undefined) toast(done);
    } catch (error) {
      if (!(error instanceof Unauthorized)) toast((error as Error).message, 'error');
    }
    this.panel.now();
  }
}

/**
 * The URL cell: "scheme://host:port" kept on one line (cut with an ellipsis
 * where even that is wider than the cell), the path free to wrap only after
 * a "/"; the whole URL in the cell's title.
 */
function urlCell(url: string): HTMLElement {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/]*)(.*)$/is.exec(url);
  const origin = match?.[1] ?? url;
  const path = match?.[2] ?? '';
  const pieces: Array<Node | string> = [h('span', { class: 'url-origin' }, origin)];
  for (const segment of path.split(/(?<=\/)/)) {
    if (segment === '') continue;
    pieces.push(h('wbr'), h('span', { class: 'url-segment' }, segment));
  }
  return h('td', { class: 'url', attrs: { 'data-label': 'URL', title: url } }, ...pieces);
}

/**
 * The circuit (docs/circuits.md): "closed" (with the failures in a row, if
 * any), "open until …" in red while no attempt is made, "half open" while
 * one forward is tried.
 */
function circuitCell(d: DestinationInfo): HTMLElement {
  const { circuit } = d;
  const attrs = { 'data-label': 'Circuit', 'data-circuit': circuit.state };
  if (circuit.state === 'closed') {
    const failures = circuit.consecutiveFailures;
    return h(
      'td',
      { class: 'circuit', attrs },
      'closed',
      failures === 0 ? '' : h('span', { class: 'muted' }, ` (${failures} failed in a row)`),
    );
  }
  if (circuit.state === 'half_open') return h('td', { class: 'circuit bad', attrs }, 'half open: one forward is tried');
  return h(
    'td',
    { class: 'circuit bad', attrs },
    'open',
    circuit.until === null
      ? ''
      : h(
          'span',
          {},
          ' until ',
          h('time', { attrs: { datetime: circuit.until, title: timeTitle(circuit.until) } }, formatTime(circuit.until)),
        ),
    h('div', { class: 'muted' }, `${circuit.consecutiveFailures} failed in a row; nothing is sent meanwhile`),
  );
}

/** A broker's connection under its kind: "connected", or the state and why (text only: the error may quote a broker). */
function connectionText(d: DestinationInfo): HTMLElement[] {
  const connection = d.connection;
  if (connection === null) return [];
  const why = connection.state === 'connected' || connection.lastError === null ? '' : `: ${connection.lastError}`;
  return [
    h(
      'div',
      {
        class: connection.state === 'connected' ? 'muted connection' : 'connection bad',
        attrs: { 'data-connection': connection.state },
      },
      `${connection.state}${why}`,
    ),
  ];
}

/** "12 s", "3 min", "2 h 5 min", "4 d": how long a forward has waited. */
function ageText(iso: string): string {
  const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  if (Number.isNaN(seconds)) return iso;
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d`;
}
