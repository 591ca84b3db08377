// What an issue concerns, read from the existing API when its row is
// expanded (issues-view.ts, docs/alerts.md "On the page"):
// - dead_letters: the destination's failed forwards, newest first;
// - destination_down, backlog: its waiting forwards (delivering, then
//   pending), oldest first;
// - verification_failing: the source's recent refused requests with a bad
//   signature, and links to the Refused view and to its kept deliveries
//   that failed verification;
// - transform_failing: the failed forwards of the routes that name the
//   transform whose error is the transform's (`transform_failed: …`).
// At most SHOWN of each; every value from outside is shown as text.

import { button, h, type Child } from './dom.ts';
import { relativeTime, timeTitle } from './format.ts';
import { listForwards, type ForwardListItem } from './forwarding-api.ts';
import type { IssueInfo } from './issues-api.ts';
import { listRefusals, type Refusal } from './refusals-api.ts';
import { listTransforms } from './transforms-api.ts';

/** The most deliveries (or refusals) an expanded issue lists. */
export const SHOWN = 10;
/** How many waiting forwards are read to find the oldest (the API lists newest first). */
const WAITING_READ = 500;
/** How many failed forwards of each route are read to find the transform's. */
const ROUTE_READ = 100;

export interface ConcernLinks {
  /** Where a delivery's link goes (its detail, as the list links it). */
  deliveryHref: (deliveryId: string) => string;
  /** Where the inbox of a source's deliveries that failed verification is. */
  failedVerificationHref: (source: string) => string;
  /** Opens the Refused view on the source's refusals. */
  showRefusals: (source: string) => void;
  /** Called when a link out of the panel is followed (the panel closes). */
  left: () => void;
}

/** A time as the page shows one: relative, with the absolute time on hover, kept fresh by the panel. */
export function timeElement(iso: string): HTMLElement {
  return h('time', { attrs: { datetime: iso, title: timeTitle(iso), 'data-relative': iso } }, relativeTime(iso));
}

/** What an issue concerns, drawn, and what it was drawn from (the same key: nothing changed). */
export interface Concerns {
  key: string;
  element: HTMLElement;
}

/** The list of what the issue concerns: reads the API, then answers the element to show. */
export async function issueConcerns(issue: IssueInfo, links: ConcernLinks): Promise<Concerns> {
  switch (issue.kind) {
    case 'dead_letters': {
      const page = await listForwards({ destination: issue.subject, status: 'failed', limit: SHOWN });
      return forwardList(page.items, page.more, links, {
        title: 'Failed forwards, newest first',
        empty: 'No failed forwards to this destination now (retried, or removed by retention).',
        detail: 'failed',
      });
    }
    case 'destination_down':
    case 'backlog': {
      const [delivering, pending] = await Promise.all([
        listForwards({ destination: issue.subject, status: 'delivering', limit: SHOWN }),
        listForwards({ destination: issue.subject, status: 'pending', limit: WAITING_READ }),
      ]);
      const waiting = [...delivering.items.reverse(), ...pending.items.reverse()];
      const note = pending.more
        ? `More than ${WAITING_READ} are waiting: these are the oldest of the newest ${WAITING_READ}.`
        : null;
      return forwardList(waiting.slice(0, SHOWN), waiting.length > SHOWN || pending.more, links, {
        title: 'Waiting forwards, oldest first',
        empty: 'No forwards to this destination are waiting now.',
        detail: 'waiting',
        note,
      });
    }
    case 'transform_failing':
      return transformForwards(issue.subject, links);
    case 'verification_failing':
      return refusedRequests(issue.subject, links);
  }
}

interface ListWords {
  title: string;
  empty: string;
  detail: 'failed' | 'waiting';
  note?: string | null;
}

function forwardList(forwards: ForwardListItem[], more: boolean, links: ConcernLinks, words: ListWords): Concerns {
  const key = JSON.stringify([forwards, more, words.note ?? null, words.empty]);
  const element = h(
    'section',
    { class: 'issue-concerns', attrs: { 'aria-label': words.title } },
    h('h3', {}, words.title),
    forwards.length === 0
      ? h('p', { class: 'muted', attrs: { 'data-none': '' } }, words.empty)
      : h('ul', { class: 'issue-forwards' }, ...forwards.map((f) => forwardItem(f, links, words.detail))),
    words.note === undefined || words.note === null ? null : h('p', { class: 'muted' }, words.note),
    more && forwards.length > 0 ? h('p', { class: 'muted' }, `The ${forwards.length} shown; there are more.`) : null,
  );
  return { key, element };
}

function forwardItem(forward: ForwardListItem, links: ConcernLinks, detail: 'failed' | 'waiting'): HTMLElement {
  const link = h(
    'a',
    {
      attrs: { href: links.deliveryHref(forward.deliveryId), 'data-delivery': forward.deliveryId },
      on: { click: () => links.left() },
    },
    `#${forward.seq}`,
    ' from ',
    forward.source,
  );
  const parts: Child[] = [link, ' · ', h('span', { class: 'forward-status' }, forward.status)];
  const attempts = `${forward.attemptCount} ${forward.attemptCount === 1 ? 'attempt' : 'attempts'}`;
  parts.push(' · ', h('span', { class: 'attempts' }, attempts));
  if (forward.lastAttemptAt !== null) parts.push(' · last ', timeElement(forward.lastAttemptAt));
  if (detail === 'waiting' && forward.status === 'pending' && forward.nextAttemptAt !== null)
    parts.push(' · next ', timeElement(forward.nextAttemptAt));
  const error = forward.lastError ?? (forward.lastStatus === null ? null : `HTTP ${forward.lastStatus}`);
  return h(
    'li',
    { attrs: { 'data-forward': forward.id } },
    h('div', {}, ...parts),
    error === null ? null : h('div', { class: 'last-error' }, error),
  );
}

/** The failed forwards of the routes that name the transform, whose error is the transform's, newest first. */
async function transformForwards(transform: string, links: ConcernLinks): Promise<Concerns> {
  const transforms = await listTransforms();
  const routes = transforms.find((t) => t.name === transform)?.usedBy ?? [];
  const pages = await Promise.all(
    routes.map(({ source, destination }) => listForwards({ source, destination, status: 'failed', limit: ROUTE_READ })),
  );
  const failed = pages
    .flatMap((page) => page.items)
    .filter((f) => f.lastError?.startsWith('transform_failed:') === true)
    .sort((a, b) => b.seq - a.seq);
  return forwardList(failed.slice(0, SHOWN), failed.length > SHOWN, links, {
    title: 'Forwards the transform failed, newest first',
    empty:
      routes.length === 0
        ? 'No route names this transform now (the config changed).'
        : 'No failed forwards of its routes carry its error now (retried, or removed by retention).',
    detail: 'failed',
    note: 'A delivery\'s detail has "Try a transform" to run it again on that delivery; nothing is sent.',
  });
}

/** The source's recent refusals for a bad signature, and where to see more. */
async function refusedRequests(source: string, links: ConcernLinks): Promise<Concerns> {
  const page = await listRefusals({ source, limit: 50 });
  const bad = page.items.filter((r) => r.code === 'signature_invalid').slice(0, SHOWN);
  const element = h(
    'section',
    { class: 'issue-concerns', attrs: { 'aria-label': 'Refused for a bad signature, newest first' } },
    h('h3', {}, 'Refused for a bad signature, newest first'),
    bad.length === 0
      ? h(
          'p',
          { class: 'muted', attrs: { 'data-none': '' } },
          'None among its latest refusals (the source may keep requests that fail verification: see its deliveries).',
        )
      : h('ul', { class: 'issue-forwards' }, ...bad.map(refusalItem)),
    h(
      'p',
      { class: 'issue-actions' },
      button('Show in Refused', () => links.showRefusals(source), 'button', { 'data-action': 'show-refusals' }),
      ' ',
      h(
        'a',
        {
          attrs: { href: links.failedVerificationHref(source), 'data-failed-verification': '' },
          on: { click: () => links.left() },
        },
        'Its deliveries kept with a failed verification',
      ),
    ),
  );
  return { key: JSON.stringify(bad.map((r) => r.id)), element };
}

function refusalItem(refusal: Refusal): HTMLElement {
  return h(
    'li',
    { attrs: { 'data-refusal': refusal.id } },
    h('div', {}, timeElement(refusal.receivedAt), ' · ', `${refusal.status} ${refusal.code}`),
    h('div', { class: 'last-error' }, refusal.detail),
  );
}
