import type { RefusalJson } from '../api/refusal-schemas.js';
import { displayWidth } from '../platform/text/display-width.js';
import { escapeForTerminal, escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { ApiClient, ApiError } from './api-client.js';
import { Backoff, describeError, formatDelay, sleep } from './backoff.js';
import { formatBytes } from './delivery-line.js';
import { StreamColumns } from './table.js';
import { writeErr, writeOut } from './process-io.js';
import type { ServerTarget } from './server-target.js';

export interface TailRefusedOptions {
  target: ServerTarget;
  source: string | undefined;
  /** Print the refusals after this seq first (0: every one kept); the present when absent. */
  after: number | undefined;
  json: boolean;
  signal: AbortSignal;
  /** Time between two reads of the refusals, in ms. */
  intervalMs?: number;
}

/** Refusals read per request while catching up. */
const PAGE = 500;

/**
 * `reception tail --refused`: follows `GET /api/refusals` by reading it
 * every second (refusals are written in batches off the delivery path, so
 * a second more of latency costs nothing) and prints each refusal once, in
 * the order they were kept. Each read walks the list from the newest back
 * to the last refusal printed, so that none is skipped however many came
 * in between; ones the server's bounds dropped before they were read are
 * gone. A server that cannot be reached is tried again, with the wait said
 * on stderr; a wrong token ends the command.
 */
export async function tailRefused(options: TailRefusedOptions): Promise<number> {
  const { target, source, json, signal } = options;
  const client = new ApiClient(target);
  const backoff = new Backoff(250, 10_000);
  let last = options.after;
  let failing = false;
  const columns = refusalColumns();
  const where = `${target.base}/api/refusals${source === undefined ? '' : `?source=${encodeURIComponent(source)}`}`;
  while (!signal.aborted) {
    try {
      if (last === undefined) {
        last = (await client.listRefusals({ limit: 1, ...(source === undefined ? {} : { source }) }, signal)).items[0]?.seq ?? 0;
        writeErr(
          `reading ${where} every ${formatDelay(options.intervalMs ?? 1000)}; waiting for refused requests (Ctrl-C to stop)`,
        );
      }
      const fresh = await refusalsAfter(client, last, source, signal);
      if (failing) writeErr(`reading ${where} again`);
      failing = false;
      backoff.reset();
      for (const refusal of fresh) {
        const width = process.stdout.isTTY ? process.stdout.columns : undefined;
        await writeOut(`${json ? escapeJsonForTerminal(JSON.stringify(refusal)) : refusalLine(refusal, width, columns)}\n`);
        last = refusal.seq;
      }
      await sleep(options.intervalMs ?? 1000, signal);
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof ApiError && !error.transient) throw error;
      const wait = backoff.next();
      writeErr(`cannot read ${where} (${describeError(error)}); trying again in ${formatDelay(wait)}`);
      failing = true;
      await sleep(wait, signal);
    }
  }
  return 0;
}

/** The refusals with a seq above `after`, oldest first: pages newest first until one reaches `after`. */
async function refusalsAfter(
  client: ApiClient,
  after: number,
  source: string | undefined,
  signal: AbortSignal,
): Promise<RefusalJson[]> {
  const newer: RefusalJson[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await client.listRefusals(
      { limit: PAGE, ...(source === undefined ? {} : { source }), ...(cursor === undefined ? {} : { cursor }) },
      signal,
    );
    for (const refusal of page.items) {
      if (refusal.seq <= after) return newer.reverse();
      newer.push(refusal);
    }
    if (page.nextCursor === null) return newer.reverse();
    cursor = page.nextCursor;
  }
}

/** The columns of `tail --refused`: time, source, method, status and code, size (on the right), then the detail. */
export function refusalColumns(): StreamColumns {
  return new StreamColumns([
    { min: 24, max: 24 },
    { min: 10, max: 32 },
    { min: 4, max: 7 },
    { min: 24, max: 32 },
    { min: 9, max: 12, align: 'right' },
  ]);
}

/**
 * One readable line per refusal: time, source (`-` for a name that was not
 * valid), method, status and code, size, the detail the sender got, and the
 * start of the body. Every field is escaped: the request is hostile.
 */
export function refusalLine(refusal: RefusalJson, width?: number, columns = refusalColumns()): string {
  const head = columns
    .line([
      escapeForTerminal(refusal.receivedAt),
      refusal.source === null ? '-' : escapeForTerminal(refusal.source),
      escapeForTerminal(refusal.method),
      `${refusal.status} ${escapeForTerminal(refusal.code)}`,
      formatBytes(refusal.size),
      escapeForTerminal(refusal.detail),
    ])
    .trimEnd();
  if (refusal.bodyPreview === '') return head;
  const room = width === undefined ? 60 : Math.max(20, width - displayWidth(head) - 3);
  const chars = Array.from(refusal.bodyPreview);
  const cut = chars.length > room ? `${chars.slice(0, Math.max(0, room - 1)).join('')}…` : refusal.bodyPreview;
  return `${head}  ${escapeForTerminal(cut)}`;
}
