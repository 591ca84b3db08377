import { parseDuration } from '../config/duration.js';
import { ApiClient, ApiError } from './api-client.js';
import type { DeliveryJson } from '../http/schemas.js';
import { escapeJsonForTerminal } from '../text/terminal-safe.js';
import { exitQuietlyOnClosedPipe, flushOut, writeOut } from './process-io.js';
import { Progress, type ProgressMode } from './progress.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { booleanFlag, integerFlag, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const exportSpec: CommandSpec = {
  name: 'export',
  summary: 'write deliveries as NDJSON to stdout',
  usage: ['export [--source S] [--since T] [--raw] [--page-size N] [--progress MODE] [--url URL] [--token TOKEN]'],
  description:
    'Writes one Delivery JSON object per line (NDJSON), newest first, walking GET /api/deliveries page by page with ' +
    'its cursor. Each delivery is written exactly once; deliveries that arrive during the export are not included ' +
    '(they go to the front of the inbox). --since keeps deliveries received at or after T, given as RFC 3339 ' +
    '(2026-11-22T00:00:00Z) or as a duration back from now (24h, 7d); the walk stops at the first older one. ' +
    'Progress goes to stderr: a bar when stderr is a terminal, otherwise a plain line every 2 s and a summary. ' +
    'With --raw, each line also holds the body bytes exactly as received, base64, as "raw" (fetched from ' +
    '/api/deliveries/{id}/raw, a few at a time): such a file is a copy of the inbox that "reception import" loads ' +
    'into another one. Without it, the bytes are left out.',
  flags: [
    { name: 'source', type: 'string', value: 'S', help: 'Only deliveries to this source.' },
    {
      name: 'since',
      type: 'string',
      value: 'T',
      help: 'Only deliveries received at or after T (RFC 3339, or a duration such as 24h).',
    },
    { name: 'raw', type: 'boolean', help: 'Add the body bytes, base64, as "raw": a file that reception import takes.' },
    { name: 'page-size', type: 'string', value: 'N', help: 'Deliveries per API call, 1 to 500 (default 500).' },
    { name: 'progress', type: 'string', value: 'MODE', help: 'auto (default), bar, lines or none.' },
    ...SERVER_FLAGS,
  ],
  examples: [
    'reception export > inbox.ndjson',
    'reception export --source stripe --since 24h | jq -r .id',
    'reception export --since 2026-11-01T00:00:00Z | gzip > november.ndjson.gz',
    'reception export --raw > inbox.ndjson && reception import inbox.ndjson --database-url postgres://db/reception',
  ],
};

export async function runExport(argv: string[]): Promise<number> {
  const { values } = parseCommand(exportSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(exportSpec));
    return 0;
  }
  const source = stringFlag(values, 'source');
  const sinceText = stringFlag(values, 'since');
  const since = sinceText === undefined ? undefined : parseSince(sinceText);
  const pageSize = integerFlag(values, 'page-size', 500, 1, 500);
  const withRaw = booleanFlag(values, 'raw');
  const mode = progressMode(stringFlag(values, 'progress') ?? 'auto');
  const api = new ApiClient(serverTarget(values));
  exitQuietlyOnClosedPipe();

  const total = since === undefined && mode !== 'none' ? await api.deliveryCount(source) : undefined;
  const progress = new Progress(mode, total);
  let written = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await api.listDeliveries({
      limit: pageSize,
      ...(source === undefined ? {} : { source }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    const items = page.items.filter((delivery) => since === undefined || Date.parse(delivery.receivedAt) >= since);
    const raws = withRaw ? await rawBodies(api, items) : undefined;
    for (const [i, delivery] of items.entries()) {
      const raw = raws?.[i];
      // A delivery deleted between the page and its bytes is left out, as one deleted before the page.
      if (withRaw && raw === undefined) continue;
      const line = raw === undefined ? delivery : { ...delivery, raw: raw.toString('base64') };
      await writeOut(`${escapeJsonForTerminal(JSON.stringify(line))}\n`);
      written += 1;
    }
    if (items.length < page.items.length) break;
    progress.update(written);
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  await flushOut();
  progress.finish(written);
  return 0;
}

/** How many bodies are fetched at once. */
const RAW_CONCURRENCY = 8;

/** The body bytes of each delivery, in the same order; undefined for one deleted meanwhile (404). */
async function rawBodies(api: ApiClient, items: readonly DeliveryJson[]): Promise<Array<Buffer | undefined>> {
  const bodies: Array<Buffer | undefined> = new Array<Buffer | undefined>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      const item = items[i];
      if (item === undefined) continue;
      try {
        bodies[i] = await api.getRaw(item.id);
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(RAW_CONCURRENCY, items.length) }, worker));
  return bodies;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/** RFC 3339 (a date alone means its midnight UTC) or a duration back from now; milliseconds since the epoch. */
/** True when the text's date and time are on the calendar and the clock: `Date.parse` reads 2026-02-30 as March 2nd. */
function isCalendarDate(text: string): boolean {
  const [year, month, day, hour = 0, minute = 0, second = 0] = text
    .split(/[-Tt :.Zz+]/)
    .slice(0, 6)
    .map(Number);
  if (year === undefined || month === undefined || day === undefined) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59;
}

export function parseSince(text: string, now = Date.now()): number {
  const duration = parseDuration(text);
  if (duration !== undefined) return now - duration;
  const time =
    RFC3339.test(text) && isCalendarDate(text) ? Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new UsageError(`--since: expected an RFC 3339 time (2026-11-22T00:00:00Z) or a duration (24h, 7d), got "${text}".`);
  }
  return time;
}

function progressMode(text: string): ProgressMode {
  if (text === 'auto') return process.stderr.isTTY ? 'bar' : 'lines';
  if (text === 'bar' || text === 'lines' || text === 'none') return text;
  throw new UsageError(`--progress: expected auto, bar, lines or none, got "${text}".`);
}
