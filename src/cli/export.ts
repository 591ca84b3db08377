import { ApiClient, ApiError } from './api-client.js';
import type { DeliveryJson } from '../api/schemas.js';
import { FILTER_FLAGS, filterParams, parseTime, readFilters } from './filter-flags.js';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { exitQuietlyOnClosedPipe, flushOut, writeOut } from './process-io.js';
import { Progress, type ProgressMode } from './progress.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { booleanFlag, integerFlag, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const exportSpec: CommandSpec = {
  name: 'export',
  summary: 'write deliveries as NDJSON to stdout',
  usage: [
    'export [--source S] [--event-type T] [--verification V] [--since T] [--until T] [-q TEXT] [--raw]',
    '       [--page-size N] [--progress MODE] [--url URL] [--token TOKEN]',
  ],
  description:
    'Writes one Delivery JSON object per line (NDJSON), newest first, walking GET /api/deliveries page by page with ' +
    'its cursor. Each delivery is written exactly once; deliveries that arrive during the export are not included ' +
    '(they go to the front of the inbox). The filters are those of the list (GET /api/deliveries), applied by the ' +
    'server: --since keeps deliveries received at or after T and --until those before T, each given as RFC 3339 ' +
    '(2026-11-22T00:00:00Z) or as a duration back from now (24h, 7d). ' +
    'Progress goes to stderr: a bar when stderr is a terminal, otherwise a plain line every 2 s and a summary. ' +
    'With --raw, each line also holds the body bytes exactly as received, base64, as "raw" (fetched from ' +
    '/api/deliveries/{id}/raw, a few at a time): such a file is a copy of the inbox that "reception import" loads ' +
    'into another one. Without it, the bytes are left out.',
  flags: [
    ...FILTER_FLAGS,
    { name: 'raw', type: 'boolean', help: 'Add the body bytes, base64, as "raw": a file that reception import takes.' },
    { name: 'page-size', type: 'string', value: 'N', help: 'Deliveries per API call, 1 to 500 (default 500).' },
    { name: 'progress', type: 'string', value: 'MODE', help: 'auto (default), bar, lines or none.' },
    ...SERVER_FLAGS,
  ],
  examples: [
    'reception export > inbox.ndjson',
    'reception export --source stripe --since 24h | jq -r .id',
    "reception export --event-type 'invoice.*' --verification failed -q cus_123 > failed-invoices.ndjson",
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
  const filters = readFilters(values);
  const { source } = filters;
  const pageSize = integerFlag(values, 'page-size', 500, 1, 500);
  const withRaw = booleanFlag(values, 'raw');
  const mode = progressMode(stringFlag(values, 'progress') ?? 'auto');
  const api = new ApiClient(serverTarget(values));
  exitQuietlyOnClosedPipe();

  // The sources' counts say how many there are of one source; of anything narrower, the export cannot know beforehand.
  const onlySource = Object.keys(filterParams(filters)).every((name) => name === 'source');
  const total = onlySource && mode !== 'none' ? await api.deliveryCount(source) : undefined;
  const progress = new Progress(mode, total);
  let written = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await api.listDeliveries({
      ...filterParams(filters),
      limit: pageSize,
      ...(cursor === undefined ? {} : { cursor }),
    });
    const items = page.items;
    const raws = withRaw ? await rawBodies(api, items) : undefined;
    for (const [i, delivery] of items.entries()) {
      const raw = raws?.[i];
      // A delivery deleted between the page and its bytes is left out, as one deleted before the page.
      if (withRaw && raw === undefined) continue;
      const line = raw === undefined ? delivery : { ...delivery, raw: raw.toString('base64') };
      await writeOut(`${escapeJsonForTerminal(JSON.stringify(line))}\n`);
      written += 1;
    }
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

/** `--since` of export and retry: see `parseTime`. */
export function parseSince(text: string, now = Date.now()): number {
  return parseTime('since', text, now);
}

function progressMode(text: string): ProgressMode {
  if (text === 'auto') return process.stderr.isTTY ? 'bar' : 'lines';
  if (text === 'bar' || text === 'lines' || text === 'none') return text;
  throw new UsageError(`--progress: expected auto, bar, lines or none, got "${text}".`);
}
