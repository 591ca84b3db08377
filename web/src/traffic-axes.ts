// The scales of the traffic chart (traffic-chart.ts): a count scale up the
// left side and a time axis along the bottom. The labels are HTML placed over
// the chart by fraction of its width and height, so that they stay readable
// while the picture itself stretches to the pane (preserveAspectRatio none).

import { h } from './dom.ts';

/** The counts the scale marks: 0 up to `top`, which is at least the highest count, in round steps. */
export interface CountScale {
  top: number;
  ticks: number[];
}

/** Round steps (1, 2, 5 × 10^k) with at most four intervals up to the highest count; always at least 0 to 1. */
export function countScale(max: number): CountScale {
  const highest = Math.max(1, Math.ceil(max));
  let step = 1;
  for (let magnitude = 1; ; magnitude *= 10) {
    const found = [1, 2, 5].map((m) => m * magnitude).find((s) => Math.ceil(highest / s) <= 4);
    if (found !== undefined) {
      step = found;
      break;
    }
  }
  const top = Math.ceil(highest / step) * step;
  const ticks: number[] = [];
  for (let value = 0; value <= top; value += step) ticks.push(value);
  return { top, ticks };
}

/** Where a count sits in the picture, from the bottom (0) to the top (1); the same rule draws the lines. */
export function heightFraction(value: number, top: number, height: number): number {
  return (1 + (top === 0 ? 0 : (value / top) * (height - 2))) / height;
}

export interface TimeTick {
  /** Milliseconds since the epoch. */
  at: number;
  /** Where it sits along the picture, from the left (0) to the right (1). */
  fraction: number;
}

/**
 * The round times within the chart: every 15 minutes for the hour by minute,
 * every 6 hours for 24 hours by hour (local time). Bucket i is drawn at
 * i / (buckets - 1) of the width, so a time sits between its buckets.
 */
export function timeTicks(fromMs: number, bucketMs: number, buckets: number): TimeTick[] {
  if (buckets < 2 || !Number.isFinite(fromMs)) return [];
  const spanMs = bucketMs * (buckets - 1);
  const everyMs = bucketMs >= 3_600_000 ? 6 * 3_600_000 : 15 * 60_000;
  // Round in local time: the offset of the zone at `from` moves the grid onto the viewer's hours.
  const offsetMs = new Date(fromMs).getTimezoneOffset() * 60_000;
  const first = Math.ceil((fromMs - offsetMs) / everyMs) * everyMs + offsetMs;
  const ticks: TimeTick[] = [];
  for (let at = first; at <= fromMs + spanMs; at += everyMs) ticks.push({ at, fraction: (at - fromMs) / spanMs });
  return ticks;
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** "14:15" in the viewer's time zone. */
export function clockTime(ms: number): string {
  return clock.format(new Date(ms));
}

/** The count labels, up the left of the picture. Hidden from assistive technology: the picture's name says the numbers. */
export function countAxis(scale: CountScale, height: number): HTMLElement {
  const axis = h('div', { class: 'traffic-y', attrs: { 'aria-hidden': 'true' } });
  axis.style.width = `${Math.max(...scale.ticks.map((value) => value.toLocaleString().length)) + 0.5}ch`;
  for (const value of scale.ticks) {
    const label = h('span', { class: 'traffic-tick', attrs: { 'data-value': String(value) } }, value.toLocaleString());
    // Set through the CSSOM, which the page's Content-Security-Policy (style-src 'self') allows.
    label.style.bottom = `${(heightFraction(value, scale.top, height) * 100).toFixed(2)}%`;
    axis.append(label);
  }
  return axis;
}

/** The time labels, under the picture. */
export function timeAxis(ticks: TimeTick[]): HTMLElement {
  const axis = h('div', { class: 'traffic-x', attrs: { 'aria-hidden': 'true' } });
  for (const tick of ticks) {
    const label = h(
      'span',
      { class: 'traffic-tick', attrs: { 'data-time': new Date(tick.at).toISOString() } },
      clockTime(tick.at),
    );
    label.style.left = `${(tick.fraction * 100).toFixed(2)}%`;
    // Centred under its time, but kept inside the picture at either end.
    label.style.transform = `translateX(${tick.fraction < 0.04 ? 0 : tick.fraction > 0.96 ? -100 : -50}%)`;
    axis.append(label);
  }
  return axis;
}
