// The open delivery's forwards: each destination it went to, where that
// stands, and every attempt (when, the HTTP status, how long, the error, and
// what the destination answered);
// with a "send again" button for each destination the config names. It
// refreshes itself every 2 s while it is on the page and the tab is visible.

import { Unauthorized, type Delivery } from './api.ts';
import { button, h, replaceChildren } from './dom.ts';
import { updateRowBadge } from './forward-badges.ts';
import { deliveryForwards, listDestinations, sendAgain, type AttemptInfo, type DeliveryForward } from './forwarding-api.ts';
import { formatTime, relativeTime } from './format.ts';
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
    replaceChildren(
      list,
      ...(forwards.length === 0 ? [h('p', { class: 'muted' }, 'Not forwarded anywhere.')] : forwards.map(forwardItem)),
    );
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

function forwardItem(forward: DeliveryForward): HTMLElement {
  const next =
    forward.status === 'pending' && forward.nextAttemptAt !== null
      ? h(
          'span',
          { class: 'muted' },
          ' · next attempt ',
          h(
            'time',
            { attrs: { datetime: forward.nextAttemptAt, title: formatTime(forward.nextAttemptAt) } },
            untilText(forward.nextAttemptAt),
          ),
        )
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
    ),
    forward.attempts.length === 0 ? null : attemptsTable(forward.attempts),
    forward.attempts.length === 0 ? null : answers(forward.attempts),
  );
}

/**
 * What the destination answered to each attempt (CONTRACT 6): its headers
 * and the first 4 KiB of its body, as text only (never HTML: the answer is
 * the destination's, hostile or not). The last attempt's is open.
 */
function answers(attempts: AttemptInfo[]): HTMLElement | null {
  const answered = attempts.filter((a) => a.response !== null);
  if (answered.length === 0) return null;
  const last = attempts.at(-1);
  return h(
    'div',
    { class: 'attempt-answers' },
    ...answered.map((a) => {
      const response = a.response;
      if (response === null) return null;
      const size = `${new TextEncoder().encode(response.body).length.toLocaleString()} bytes${response.bodyTruncated ? ', the first 4 KiB of a longer body' : ''}`;
      return h(
        'details',
        { class: 'attempt-answer', attrs: { 'data-n': String(a.n), ...(a === last ? { open: '' } : {}) } },
        h('summary', {}, `Answer to attempt ${a.n}`, h('span', { class: 'muted' }, ` · HTTP ${a.status ?? '—'} · ${size}`)),
        response.headers.length === 0
          ? null
          : h(
              'table',
              { class: 'kv-table answer-headers' },
              h(
                'tbody',
                {},
                ...response.headers.map(([name, value]) =>
                  h('tr', {}, h('th', { attrs: { scope: 'row' } }, name), h('td', {}, value)),
                ),
              ),
            ),
        response.body === ''
          ? h('p', { class: 'muted' }, 'No body.')
          : h('pre', { class: 'raw-body answer-body' }, response.body),
      );
    }),
  );
}

function attemptsTable(attempts: AttemptInfo[]): HTMLElement {
  const head = ['#', 'Started', 'HTTP status', 'Duration', 'Error'];
  return h(
    'table',
    { class: 'kv-table attempts-table' },
    h('thead', {}, h('tr', {}, ...head.map((label) => h('th', { attrs: { scope: 'col' } }, label)))),
    h(
      'tbody',
      {},
      ...attempts.map((a) =>
        h(
          'tr',
          { attrs: { 'data-n': String(a.n) } },
          h('td', {}, String(a.n)),
          h(
            'td',
            {},
            h(
              'time',
              { attrs: { datetime: a.startedAt, title: formatTime(a.startedAt), 'data-relative': a.startedAt } },
              relativeTime(a.startedAt),
            ),
          ),
          h(
            'td',
            { class: a.status !== null && a.status >= 200 && a.status < 300 ? 'ok' : 'bad' },
            a.status === null ? '—' : String(a.status),
          ),
          h('td', {}, `${a.durationMs.toLocaleString()} ms`),
          h('td', {}, a.error ?? ''),
        ),
      ),
    ),
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
