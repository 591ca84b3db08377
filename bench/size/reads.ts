import { performance } from 'node:perf_hooks';
import { CUSTOMERS } from './deliveries.js';

/** One read the page or a client makes, asked again and again with parameters that vary by iteration. */
export interface ReadCase {
  name: string;
  /** The request path of iteration `i`. */
  path(i: number): string;
}

export interface ReadResult {
  name: string;
  example: string;
  requests: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Items in the last answer (a page's deliveries, the sources, the types), to show what was read. */
  items: number;
}

const DAY = 24 * 3600 * 1000;

/** The reads measured on a full inbox whose deliveries span the 30 days before `now` (bench/size/fill.ts). */
export function readCases(now: number): ReadCase[] {
  const day = (i: number): { since: string; until: string } => {
    const start = now - (2 + (i % 25)) * DAY;
    return { since: new Date(start).toISOString(), until: new Date(start + DAY).toISOString() };
  };
  const customer = (i: number): number => (i * 7919) % CUSTOMERS;
  const q = (params: Record<string, string>): string => new URLSearchParams({ limit: '50', ...params }).toString();
  return [
    { name: 'list, no filter', path: () => `/api/deliveries?${q({})}` },
    { name: 'list: source + event type', path: () => `/api/deliveries?${q({ source: 'stripe', eventType: 'invoice.paid' })}` },
    { name: 'list: event type prefix, every source', path: () => `/api/deliveries?${q({ eventType: 'pull_request.*' })}` },
    { name: 'list: verification=failed (1 in 100 signed)', path: () => `/api/deliveries?${q({ verification: 'failed' })}` },
    { name: 'list: one source, one day (since/until)', path: (i) => `/api/deliveries?${q({ source: 'github', ...day(i) })}` },
    {
      name: 'list: source + type prefix + verification + day',
      path: (i) => `/api/deliveries?${q({ source: 'stripe', eventType: 'invoice.*', verification: 'verified', ...day(i) })}`,
    },
    { name: 'q: one customer e-mail (a few hits)', path: (i) => `/api/deliveries?${q({ q: `user${customer(i)}@example.com` })}` },
    { name: 'q: a common word', path: () => `/api/deliveries?${q({ q: 'widget' })}` },
    {
      name: 'q + source: a customer id in one source',
      path: (i) => `/api/deliveries?${q({ source: 'shopify', q: `"cus_${customer(i)}"` })}`,
    },
    { name: 'q: text in a header value', path: (i) => `/api/deliveries?${q({ q: `d-${1000 + i * 13}` })}` },
    { name: 'sources panel', path: () => '/api/sources' },
    {
      name: 'event types panel, one source',
      path: (i) => `/api/event-types?source=${['stripe', 'github', 'shopify'][i % 3] ?? ''}`,
    },
    { name: 'event types, every source', path: () => '/api/event-types' },
    {
      name: 'count for delete by filter: source + type',
      path: () => `/api/deliveries/count?source=stripe&eventType=invoice.paid`,
    },
  ];
}

/** Asks each case `warmup` times unmeasured, then `requests` times one after another; p50, p95 and max. */
export async function measureReads(
  url: string,
  token: string,
  cases: readonly ReadCase[],
  requests: number,
  warmup: number,
): Promise<ReadResult[]> {
  const results: ReadResult[] = [];
  for (const read of cases) {
    let items = 0;
    const ask = async (i: number): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${url}${read.path(i)}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await response.json()) as { items?: unknown[]; count?: number };
      const ms = performance.now() - started;
      if (response.status !== 200)
        throw new Error(`${read.name}: ${read.path(i)} answered ${response.status}: ${JSON.stringify(body)}`);
      items = body.items?.length ?? body.count ?? 0;
      return ms;
    };
    for (let i = 0; i < warmup; i++) await ask(requests + i);
    const times: number[] = [];
    for (let i = 0; i < requests; i++) times.push(await ask(i));
    times.sort((a, b) => a - b);
    const at = (share: number): number => times[Math.min(times.length - 1, Math.ceil(share * times.length) - 1)] ?? 0;
    results.push({
      name: read.name,
      example: read.path(0),
      requests,
      p50Ms: at(0.5),
      p95Ms: at(0.95),
      maxMs: times.at(-1) ?? 0,
      items,
    });
  }
  return results;
}
