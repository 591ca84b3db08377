// The small badge a delivery's row carries when it is forwarded: how far its
// forwards got, in one word, with each destination's state in the tooltip.
// Each destination counts by its latest forward: a dead letter that a retry
// or a "send again" has since delivered no longer shows as failed.
// Rows arrive with their forwards still pending; while any shown row has an
// unsettled or failed forward, the newest forwards are read every few seconds
// and the badges of the rows they belong to follow (a row beyond those reads
// its own forwards, a few rows a time).

import type { ForwardSummary } from './delivery.ts';
import { h } from './dom.ts';
import { Unauthorized } from './api.ts';
import { deliveryForwards, recentForwards, type DeliveryForward, type ForwardListItem } from './forwarding-api.ts';
import { badgeState, latestPerDestination, mergeForwards, type BadgeState } from './forward-state.ts';
import { Poller } from './poller.ts';

const LABELS: Record<BadgeState, string> = {
  failed: 'forward failed',
  forwarding: 'forwarding',
  forwarded: 'forwarded',
  cancelled: 'not forwarded',
};

/** What each badge stands for, to recompute it when some of its forwards change. */
const summaries = new WeakMap<HTMLElement, ForwardSummary[]>();

/** The badge of a delivery's forwards; null when it is forwarded nowhere. */
export function forwardBadge(forwards: readonly ForwardSummary[] | undefined): HTMLElement | null {
  if (forwards === undefined || forwards.length === 0) return null;
  const state = badgeState(forwards);
  const title = latestPerDestination(forwards)
    .map((f) => `${f.destination}: ${f.status}`)
    .join(', ');
  const badge = h(
    'span',
    { class: `forward-badge forward-${state}`, attrs: { 'data-state': state, title: `Forwards: ${title}` } },
    LABELS[state],
  );
  summaries.set(badge, [...forwards]);
  return badge;
}

/** Replaces the badge of the delivery's row (wherever the row is shown) with one for these forwards. */
export function updateRowBadge(deliveryId: string, forwards: readonly ForwardSummary[]): void {
  for (const row of document.querySelectorAll<HTMLElement>(`.delivery-list li[data-id="${CSS.escape(deliveryId)}"]`)) {
    const old = row.querySelector<HTMLElement>('.forward-badge');
    const badge = forwardBadge(forwards);
    // The same badge stays, so that a tooltip being read is not pulled away.
    if (old !== null && badge !== null && old.title === badge.title && old.dataset.state === badge.dataset.state) continue;
    if (old !== null && badge !== null) old.replaceWith(badge);
    else if (old !== null) old.remove();
    else if (badge !== null) row.querySelector('.row-meta')?.prepend(badge);
  }
}

/** How many of the newest forwards one refresh reads. */
const RECENT = 200;

/** How many rows beyond those one refresh reads the forwards of, one request each. */
const OLDER_PER_REFRESH = 3;

/** Keeps the badges of the rows in `list` current while any shows unsettled or failed forwards; answers a stop function. */
export function followRowBadges(list: HTMLElement, everyMs = 3000): () => void {
  let turn = 0;
  const refresh = async (): Promise<void> => {
    // Failed ones too: a retry (here, or from the command line) sets them going again.
    const unsettled = [
      ...list.querySelectorAll<HTMLElement>('.forward-badge[data-state="forwarding"], .forward-badge[data-state="failed"]'),
    ];
    if (unsettled.length === 0) return;
    const byDelivery = new Map<string, ForwardListItem[]>();
    for (const forward of await recentForwards(RECENT)) {
      const of = byDelivery.get(forward.deliveryId) ?? [];
      of.push(forward);
      byDelivery.set(forward.deliveryId, of);
    }
    const older: string[] = [];
    for (const badge of unsettled) {
      const id = badge.closest<HTMLElement>('li[data-id]')?.dataset.id;
      if (id === undefined) continue;
      const newest = byDelivery.get(id);
      if (newest === undefined) older.push(id);
      else updateRowBadge(id, mergeForwards(summaries.get(badge) ?? [], newest));
    }
    // Rows whose forwards are all older than those read (a dead letter retried
    // from elsewhere keeps its place): a few each time, in turn, from their own forwards.
    const start = older.length === 0 ? 0 : turn % older.length;
    const chosen = [...older.slice(start), ...older.slice(0, start)].slice(0, OLDER_PER_REFRESH);
    turn = start + chosen.length;
    for (const id of chosen) {
      let forwards: DeliveryForward[];
      try {
        forwards = await deliveryForwards(id);
      } catch (error) {
        if (error instanceof Unauthorized) throw error;
        continue; // deleted meanwhile: its row goes with the next reload
      }
      updateRowBadge(
        id,
        forwards.map((f) => ({ destination: f.destination, status: f.status })),
      );
    }
  };
  const poller = new Poller(refresh, everyMs, () => list.isConnected).start();
  return () => poller.stop();
}
