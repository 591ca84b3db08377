import { setTimeout as sleep } from 'node:timers/promises';

interface SourcePage {
  items: Array<{ source: string; count: number }>;
  nextCursor: string | null;
}

/** One walk of `GET /api/sources?q=<source>` (a page at a time): the stored count of `source` (0 when absent). */
async function readCount(url: string, token: string, source: string): Promise<number> {
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ q: source, limit: '500' });
    if (cursor !== null) params.set('cursor', cursor);
    const response = await fetch(`${url}/api/sources?${params.toString()}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(5000),
    });
    if (response.status !== 200) {
      throw new Error(`GET /api/sources answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    }
    const page = (await response.json()) as SourcePage;
    const found = page.items.find((item) => item.source === source);
    if (found !== undefined) return found.count;
    cursor = page.nextCursor;
  } while (cursor !== null);
  return 0;
}

/**
 * How many deliveries Reception stored for `source`, read through its API.
 * Requests still in flight when the load generator stopped may commit a
 * moment later, so it reads until two reads 250 ms apart agree (at most 10 s).
 */
export async function storedCount(url: string, token: string, source: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  let last = await readCount(url, token, source);
  while (Date.now() < deadline) {
    await sleep(250);
    const next = await readCount(url, token, source);
    if (next === last) return next;
    last = next;
  }
  return last;
}
