// The open delivery's forwards: each destination it went to, where that
// stands, and every attempt (attempts-table.ts: when, the HTTP status, how
// long, the error, and what the destination answered); "Retry" on a failed
// one, and a "send again" button for each destination the config names. It
// refreshes itself every 2 s while it is on the page and the tab is visible.

import { Unauthorized, type Delivery } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { updateRowBadge } from './forward-badges.ts';
import { attemptsTable } from './attempts-table.ts';
import { deliveryForwards, listDestinations, retryForwards, sendAgain, type DeliveryForward } from './forwarding-api.ts';
import { formatTime, timeTitle } from './format.ts';
import { Poller } from './poller.ts';
import { toast } from './toast.ts';

const REFRESH_MS = 2000;

/** The "Forwards" section of a delivery's detail; it keeps itself current until it leaves the page. */
export function forwardsSection(delivery: Delivery): HTMLElement {
  const count = h('span', { class: 'forward-count' });
  const sendBar = h('div', { class: 'send-again', attrs: { role: 'group', 'aria-label': 'Send again' } });
  const list = h('div', { class: 'forward-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const problem = h('p', { class: 'error forward-problem', attrs: { hidden: '' } });
  const section = h(
    'section',
    { class: 'detail-section forwards-section', attrs: { 'aria-label': 'Forwards' } },
    h('div', { class: 'section-head' }, h('h3', {}, 'Forwards', count)),
    list,
    problem,
    sendBar,
  );

  let shown = '';
  const refresh = async (): Promise<void> => {
    let forwards: DeliveryForward[];
    try {
      forwards = await deliveryForwards(delivery.id);
    } catch (error) {
      if (error instanceof Unauthorized) throw error;
      problem.textContent = `Could not read the forwards: ${(error as Error).message}`;
      problem.hidden = false;
      return;
    }
    problem.hidden = true;
    // Redrawn only when something changed, so that a selection or a focused button survives a refresh.
    const text = JSON.stringify(forwards);
    if (text === shown || !section.isConnected) return;
    shown = text;
    replaceChildren(count, forwards.length === 0 ? '' : ` (${forwards.length})`);
    // The answers the reader opened stay open through the redraw.
    const opened = new Set(
      [...list.querySelectorAll<HTMLElement>('details.attempt-answer[open]')].map(
        (d) => `${d.closest<HTMLElement>('[data-forward-id]')?.dataset.forwardId ?? ''} ${d.dataset.n ?? ''}`,
      ),
    );
    replaceChildren(
      list,
      ...(forwards.length === 0
        ? [h('p', { class: 'muted' }, 'Not forwarded anywhere.')]
        : forwards.map((forward) => forwardItem(forward, (f) => void retry(f)))),
    );
    for (const details of list.querySelectorAll<HTMLDetailsElement>('details.attempt-answer')) {
      const key = `${details.closest<HTMLElement>('[data-forward-id]')?.dataset.forwardId ?? ''} ${details.dataset.n ?? ''}`;
      if (opened.has(key)) details.open = true;
    }
    updateRowBadge(
      delivery.id,
      forwards.map((f) => ({ destination: f.destination, status: f.status })),
    );
  };
  const poller = new Poller(refresh, REFRESH_MS, () => section.isConnected);

  const send = async (destination: string): Promise<void> => {
    try {
      await sendAgain(delivery.id, destination);
      toast(`Sending to ${destination} again.`);
    } catch (error) {
      if (!(error instanceof Unauthorized)) toast(`Could not send again: ${(error as Error).message}`, 'error');
    }
    poller.now();
  };

  const retry = async (forward: DeliveryForward): Promise<void> => {
    try {
      const retried = await retryForwards([forward.id]);
      // Not retried: it was no longer failed (a retry from elsewhere came first); the refresh shows where it is.
      toast(retried === 1 ? `Retrying the forward to ${forward.destination}.` : 'That forward is no longer failed.');
    } catch (error) {
      if (!(error instanceof Unauthorized)) toast(`Could not retry: ${(error as Error).message}`, 'error');
    }
    poller.now();
  };

  void listDestinations().then(
    (destinations) => {
      const names = destinations.filter((d) => d.kind !== 'removed').map((d) => d.name);
      if (names.length === 0) return;
      replaceChildren(
        sendBar,
        h('span', { class: 'muted' }, 'Send again to'),
        ...names.map((name) =>
          button(name, () => void send(name), 'button send-again-button', {
            'data-action': 'send-again',
            'data-destination': name,
            title: `Send this delivery to ${name} again`,
          }),
        ),
      );
    },
    () => undefined,
  );
  // Started on the next turn: the section is in the page by then.
  setTimeout(() => poller.start(), 0);
  return section;
}

function forwardItem(forward: DeliveryForward, retry: (forward: DeliveryForward) => void): HTMLElement {
  const next =
    forward.status === 'pending' && forward.nextAttemptAt !== null
      ? h(
          'span',
          { class: 'muted' },
          ' · next attempt ',
          h(
            'time',
            { attrs: { datetime: forward.nextAttemptAt, title: timeTitle(forward.nextAttemptAt) } },
            untilText(forward.nextAttemptAt),
          ),
        )
      : null;
  // A dead letter: this forward again, with a fresh budget (CONTRACT 6, `POST /api/forwards/retry`).
  const retryButton =
    forward.status === 'failed'
      ? button('Retry', () => retry(forward), 'button retry-button', {
          'data-action': 'retry',
          // The visible word first (WCAG 2.5.3), then which forward: a delivery may have several.
          'aria-label': `Retry the forward to ${forward.destination}`,
          title: `Try this forward to ${forward.destination} again, with a fresh budget of attempts`,
        })
      : null;
  return h(
    'article',
    {
      class: 'forward',
      attrs: { 'data-forward-id': forward.id, 'data-destination': forward.destination, 'data-status': forward.status },
    },
    h(
      'div',
      { class: 'forward-head' },
      h('strong', { class: 'forward-destination' }, forward.destination),
      h('span', { class: `badge forward-status status-${forward.status}` }, forward.status),
      h('span', { class: 'muted' }, `${forward.attempts.length} ${forward.attempts.length === 1 ? 'attempt' : 'attempts'}`),
      next,
      retryButton,
    ),
    forward.attempts.length === 0 ? null : attemptsTable(forward.attempts),
  );
}

/** "now", "in 4 s", "in 3 min": when a pending forward is next attempted. */
function untilText(iso: string): string {
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  if (Number.isNaN(seconds) || seconds <= 0) return 'now';
  if (seconds < 60) return `in ${seconds} s`;
  if (seconds < 3600) return `in ${Math.round(seconds / 60)} min`;
  return `at ${formatTime(iso)}`;
}
