// Pictures of the traffic (README, "A picture of the traffic"): a sparkline
// of a source's last 24 hours in the sources panel, and on a source's view a
// chart of its deliveries, refusals and forward outcomes per minute or hour.
// Plain SVG built with DOM APIs (no library, no markup parsed); each picture
// says its numbers in its accessible name and its <title>.

import './traffic.css';
import { ApiError, call } from './api.ts';
import type { SourceSummary } from './delivery.ts';
import { button, h, replaceChildren } from './dom.ts';
import { Poller } from './poller.ts';
import { clockTime, countAxis, countScale, heightFraction, timeAxis, timeTicks } from './traffic-axes.ts';

const SVG = 'http://www.w3.org/2000/svg';

export type Sparkline = NonNullable<SourceSummary['traffic']>;

/** `GET /api/sources/{source}/traffic`, as the chart reads it. */
export interface Traffic {
  source: string;
  bucket: 'minute' | 'hour';
  bucketSeconds: number;
  from: string;
  to: string;
  delivered: number[];
  refused: number[];
  forwarded: number[];
  forwardFailed: number[];
  dead: number[];
}

type SeriesName = 'delivered' | 'refused' | 'forwarded' | 'forwardFailed' | 'dead';

const SERIES: ReadonlyArray<{ name: SeriesName; label: string }> = [
  { name: 'delivered', label: 'delivered' },
  { name: 'refused', label: 'refused' },
  { name: 'forwarded', label: 'forwarded' },
  { name: 'forwardFailed', label: 'forward attempts failed' },
  { name: 'dead', label: 'dead letters' },
];

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  // Marks the page's own pictures, which the hostile payload tests tell from markup a payload could have become.
  if (tag === 'svg') element.setAttribute('data-page-drawn', '');
  return element;
}

const total = (values: readonly number[]): number => values.reduce((sum, n) => sum + n, 0);

/** The points of a line through `values`, scaled into width × height (0 at the bottom). */
function points(values: readonly number[], max: number, width: number, height: number): string {
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  return values
    .map((value, i) => `${(i * step).toFixed(1)},${(height - 1 - (max === 0 ? 0 : (value / max) * (height - 2))).toFixed(1)}`)
    .join(' ');
}

/** Counts a delivery received at `at` (RFC 3339) in the sparkline's buckets, moving them on when a new hour began. */
export function countDelivery(spark: Sparkline, at: string): void {
  const bucketMs = spark.bucketSeconds * 1000;
  const index = Math.floor((Date.parse(at) - Date.parse(spark.from)) / bucketMs);
  if (!Number.isFinite(index) || index < 0) return;
  const shift = index - (spark.delivered.length - 1);
  if (shift > 0) {
    const drop = Math.min(shift, spark.delivered.length);
    spark.delivered.splice(0, drop);
    spark.refused.splice(0, drop);
    spark.delivered.push(...new Array<number>(drop).fill(0));
    spark.refused.push(...new Array<number>(drop).fill(0));
    spark.from = new Date(Date.parse(spark.from) + shift * bucketMs).toISOString();
  }
  const last = spark.delivered.length - 1;
  spark.delivered[last] = (spark.delivered[last] ?? 0) + 1;
}

/** The sparkline of a source seen first on the live stream: its one delivery, at `at`. */
export function firstSparkline(at: string): Sparkline {
  const hour = 3_600_000;
  const start = Math.floor(Date.parse(at) / hour) * hour - 23 * hour;
  const spark = {
    from: new Date(start).toISOString(),
    bucketSeconds: 3600,
    delivered: new Array<number>(24).fill(0),
    refused: new Array<number>(24).fill(0),
  };
  countDelivery(spark, at);
  return spark;
}

/** A source's last 24 hours: deliveries as a line, refusals (if any) as a second one. */
export function sparkline(spark: Sparkline): SVGSVGElement {
  const width = 72;
  const height = 18;
  const delivered = total(spark.delivered);
  const refused = total(spark.refused);
  const label = `Last 24 hours: ${delivered} delivered, ${refused} refused`;
  const max = Math.max(1, ...spark.delivered, ...spark.refused);
  const picture = svg('svg', {
    class: 'sparkline',
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-label': label,
    'data-delivered': delivered,
    'data-refused': refused,
  });
  // No <title>: a row of the panel costs three nodes more, not five (the panel keeps its node count small, issue 16).
  picture.append(svg('polyline', { class: 'spark-delivered', points: points(spark.delivered, max, width, height) }));
  // The refusals only where there were some: a flat red line along the bottom would read as an alarm.
  if (refused > 0) picture.append(svg('polyline', { class: 'spark-refused', points: points(spark.refused, max, width, height) }));
  return picture;
}

type View = { range: '1h'; bucket: 'minute' } | { range: '24h'; bucket: 'hour' };
const VIEWS: ReadonlyArray<{ label: string; view: View }> = [
  { label: 'Last hour', view: { range: '1h', bucket: 'minute' } },
  { label: 'Last 24 hours', view: { range: '24h', bucket: 'hour' } },
];

/** How often the chart reads the counts again while it is shown (refusals and forward outcomes arrive there only). */
const REFRESH_MS = 10_000;

export async function readTraffic(source: string, view: View): Promise<Traffic> {
  const response = await call(`/api/sources/${encodeURIComponent(source)}/traffic?range=${view.range}&bucket=${view.bucket}`);
  return (await response.json()) as Traffic;
}

/** The chart on a source's view: one line per kind of count, with the totals as its legend. */
export class TrafficChart {
  readonly element: HTMLElement;
  private readonly picture: HTMLElement;
  private readonly legend: HTMLElement;
  private readonly switches: HTMLButtonElement[];
  private source: string | undefined;
  private view: View = { range: '1h', bucket: 'minute' };
  private data: Traffic | undefined;
  private poller: Poller | undefined;
  private generation = 0;

  constructor() {
    this.picture = h('div', { class: 'traffic-picture' });
    this.legend = h('ul', { class: 'traffic-legend' });
    this.switches = VIEWS.map(({ label, view }) =>
      button(label, () => this.show(view), 'button quiet', { 'data-range': view.range, 'aria-pressed': 'false' }),
    );
    this.element = h(
      'section',
      { class: 'traffic-chart', attrs: { 'aria-label': 'Traffic', hidden: '' } },
      h('div', { class: 'traffic-head' }, h('h3', {}, 'Traffic'), h('span', { class: 'traffic-switch' }, ...this.switches)),
      this.picture,
      this.legend,
    );
    this.markView();
  }

  /** Shows the chart of `source`, or hides it (all sources). */
  setSource(source: string | undefined): void {
    if (source === this.source) return;
    this.source = source;
    this.data = undefined;
    this.poller?.stop();
    this.poller = undefined;
    this.generation++;
    if (source === undefined) {
      this.element.hidden = true;
      return;
    }
    this.element.hidden = false;
    replaceChildren(this.picture, h('p', { class: 'muted' }, 'Loading…'));
    replaceChildren(this.legend);
    const generation = this.generation;
    this.poller = new Poller(
      () => this.refresh(),
      REFRESH_MS,
      () => generation === this.generation,
    ).start();
  }

  /** A delivery from the live stream: counted at once in the bucket it falls in (the next refresh reads the rest). */
  arrived(source: string, receivedAt: string): void {
    const data = this.data;
    if (data === undefined || source !== this.source) return;
    const index = Math.floor((Date.parse(receivedAt) - Date.parse(data.from)) / (data.bucketSeconds * 1000));
    if (index >= data.delivered.length) {
      this.poller?.now();
      return;
    }
    if (index < 0) return;
    data.delivered[index] = (data.delivered[index] ?? 0) + 1;
    this.render(data);
  }

  stop(): void {
    this.poller?.stop();
    this.generation++;
  }

  private show(view: View): void {
    this.view = view;
    this.markView();
    this.poller?.now();
  }

  private markView(): void {
    for (const [i, control] of this.switches.entries()) {
      control.setAttribute('aria-pressed', String(VIEWS[i]?.view.range === this.view.range));
    }
  }

  private async refresh(): Promise<void> {
    const source = this.source;
    if (source === undefined) return;
    const generation = this.generation;
    try {
      const data = await readTraffic(source, this.view);
      if (generation !== this.generation) return;
      this.data = data;
      this.render(data);
    } catch (error) {
      if (generation !== this.generation || !(error instanceof ApiError)) throw error;
      replaceChildren(this.picture, h('p', { class: 'muted' }, `No traffic to show: ${error.message}`));
    }
  }

  private render(data: Traffic): void {
    const width = 600;
    const height = 120;
    const max = Math.max(1, ...SERIES.flatMap(({ name }) => data[name]));
    const scale = countScale(max);
    const bucketMs = data.bucketSeconds * 1000;
    const fromMs = Date.parse(data.from);
    const lastMs = fromMs + bucketMs * (data.delivered.length - 1);
    const span = data.bucket === 'minute' ? 'the last hour, by minute' : 'the last 24 hours, by hour';
    const totals = SERIES.map(({ name, label }) => `${total(data[name])} ${label}`).join(', ');
    const label =
      `Traffic of ${span} (${clockTime(fromMs)} to ${clockTime(lastMs)}): ${totals}. ` +
      `Highest count in one ${data.bucket}: ${max}.`;
    const picture = svg('svg', {
      class: 'traffic-svg',
      viewBox: `0 0 ${width} ${height}`,
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': label,
    });
    const title = svg('title');
    title.textContent = label;
    picture.append(title);
    // A faint line at each count of the scale; the one at 0 is the axis.
    for (const value of scale.ticks) {
      const y = (height * (1 - heightFraction(value, scale.top, height))).toFixed(1);
      picture.append(
        svg('line', {
          class: value === 0 ? 'traffic-axis' : 'traffic-grid',
          x1: 0,
          y1: y,
          x2: width,
          y2: y,
          'vector-effect': 'non-scaling-stroke',
        }),
      );
    }
    for (const { name } of SERIES) {
      picture.append(
        svg('polyline', {
          class: `traffic-line traffic-${name}`,
          points: points(data[name], scale.top, width, height),
          'vector-effect': 'non-scaling-stroke',
        }),
      );
    }
    const plot = h(
      'div',
      { class: 'traffic-plot' },
      countAxis(scale, height),
      h('div', { class: 'traffic-canvas' }, picture, timeAxis(timeTicks(fromMs, bucketMs, data.delivered.length))),
    );
    replaceChildren(this.picture, plot);
    replaceChildren(
      this.legend,
      ...SERIES.map(({ name, label: text }) =>
        h(
          'li',
          { class: `traffic-key traffic-${name}`, attrs: { 'data-series': name } },
          h('span', { class: 'traffic-swatch', attrs: { 'aria-hidden': 'true' } }),
          h('span', { class: 'traffic-total' }, String(total(data[name]))),
          ` ${text}`,
        ),
      ),
    );
  }
}
