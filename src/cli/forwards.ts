import { FORWARD_STATUSES, type ForwardStatus } from '../forwarding/outbox/outbox.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeForTerminal, escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { ApiClient } from './api-client.js';
import { printDeliveryForwards } from './delivery-forwards.js';
import { OutboxApi, unknownDestination, type ForwardRow } from './outbox-api.js';
import { exitQuietlyOnClosedPipe, flushOut, writeErr, writeOut } from './process-io.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { alignColumns, formatAge } from './table.js';
import { booleanFlag, integerFlag, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const forwardsSpec: CommandSpec = {
  name: 'forwards',
  summary: 'list forwards: where deliveries are being handed on, and how far each got',
  usage: [
    'forwards [--status S] [--destination D] [--source S] [--limit N] [--page-size N] [--json] [--url URL] [--token TOKEN]',
  ],
  description:
    'Lists forwards (one delivery on its way to one destination), newest first, walking GET /api/forwards page by ' +
    'page up to --limit, as a table under a header line: the delivery\'s seq and id, the forward id (what "reception ' +
    'retry" takes), source, destination, status, attempts made, when the last attempt started (UTC), and its result ' +
    '(the last error, else the HTTP status answered), with when a pending forward is next attempted. The statuses are pending, delivering, succeeded, ' +
    'failed (the dead letter: retry it with "reception retry") and cancelled. Sources, destinations and errors are ' +
    'printed with control characters as escapes. An unknown --destination is an error (exit 1), not an empty list. ' +
    "--delivery ID lists that delivery's forwards instead, each attempt on its own line followed by the destination's " +
    'answer: its headers and the first 4 KiB of its body, each line after "< " with control characters as escapes.',
  flags: [
    { name: 'status', type: 'string', value: 'S', help: `Only forwards in this state: ${FORWARD_STATUSES.join(', ')}.` },
    { name: 'destination', type: 'string', value: 'D', help: 'Only forwards to this destination.' },
    { name: 'source', type: 'string', value: 'S', help: 'Only forwards of deliveries to this source.' },
    { name: 'limit', type: 'string', value: 'N', help: 'Print at most N forwards, 1 to 100000 (default 100).' },
    { name: 'page-size', type: 'string', value: 'N', help: 'Forwards per API call, 1 to 500 (default 500).' },
    {
      name: 'delivery',
      type: 'string',
      value: 'ID',
      help: "Only this delivery's forwards, each with its attempts and what the destination answered to each (its headers and the first 4 KiB of its body).",
    },
    { name: 'json', type: 'boolean', help: 'Print each forward as one line of JSON (NDJSON) instead.' },
    ...SERVER_FLAGS,
  ],
  examples: [
    'reception forwards --status failed',
    'reception forwards --destination app --source stripe --limit 20',
    'reception forwards --status failed --json | jq -r .id',
    'reception forwards --delivery 01970c1f-0291-70e3-9a4b-5c6d7e8f9a0b',
  ],
};

/** A --status value, with the status meant when it is a near miss. */
export function statusFlag(text: string | undefined): ForwardStatus | undefined {
  if (text === undefined) return undefined;
  const status = FORWARD_STATUSES.find((s) => s === text);
  if (status !== undefined) return status;
  const near = nearestWithin(text, FORWARD_STATUSES, 3);
  throw new UsageError(
    `--status: expected ${FORWARD_STATUSES.join(', ')}, got "${escapeForTerminal(text)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}.`,
  );
}

export async function runForwards(argv: string[]): Promise<number> {
  const { values } = parseCommand(forwardsSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(forwardsSpec));
    return 0;
  }
  const status = statusFlag(stringFlag(values, 'status'));
  const destination = stringFlag(values, 'destination');
  const source = stringFlag(values, 'source');
  const limit = integerFlag(values, 'limit', 100, 1, 100_000);
  const pageSize = integerFlag(values, 'page-size', 500, 1, 500);
  const json = booleanFlag(values, 'json');
  const delivery = stringFlag(values, 'delivery');
  if (delivery !== undefined) {
    const others = ['status', 'destination', 'source', 'limit', 'page-size'].filter((name) => values[name] !== undefined);
    if (others.length > 0)
      throw new UsageError(`--delivery lists one delivery's forwards: it goes without --${others.join(', --')}.`);
    exitQuietlyOnClosedPipe();
    return printDeliveryForwards(new ApiClient(serverTarget(values)), delivery, json);
  }
  const outbox = new OutboxApi(new ApiClient(serverTarget(values)));
  const destinations = await outbox.destinations();
  if (destination !== undefined && !destinations.some((d) => d.name === destination))
    throw unknownDestination(destination, destinations);
  const paused = new Set(destinations.filter((d) => d.paused).map((d) => d.name));
  exitQuietlyOnClosedPipe();

  const query = {
    ...(status === undefined ? {} : { status }),
    ...(destination === undefined ? {} : { destination }),
    ...(source === undefined ? {} : { source }),
  };
  const rows: ForwardRow[] = [];
  let cursor: string | undefined;
  while (rows.length < limit) {
    const page = await outbox.forwards(query, Math.min(pageSize, limit - rows.length), cursor);
    for (const forward of page.items.slice(0, limit - rows.length)) {
      if (json) await writeOut(`${escapeJsonForTerminal(JSON.stringify(forward))}\n`);
      rows.push(forward);
    }
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  if (!json && rows.length > 0) {
    const now = Date.now();
    const cells = rows.map((f) => forwardCells(f, now, paused.has(f.destination)));
    await writeOut(`${alignColumns([FORWARD_HEADER, ...cells]).join('\n')}\n`);
  }
  await flushOut();
  if (rows.length === 0) writeErr('No forwards match.');
  return 0;
}

/** The table's header: the cells of {@link forwardCells}, in order. */
export const FORWARD_HEADER = [
  'SEQ',
  'DELIVERY',
  'FORWARD',
  'SOURCE',
  'DESTINATION',
  'STATUS',
  'ATTEMPTS',
  'LAST ATTEMPT',
  'LAST RESULT',
];

/** The cells of one forward's line, escaped (`-` for nothing yet). */
export function forwardCells(f: ForwardRow, now: number, paused: boolean): string[] {
  return [
    String(f.seq),
    escapeForTerminal(f.deliveryId),
    escapeForTerminal(f.id),
    escapeForTerminal(f.source),
    escapeForTerminal(f.destination),
    escapeForTerminal(f.status),
    String(f.attemptCount),
    f.lastAttemptAt === null ? '-' : shortTime(f.lastAttemptAt),
    lastColumn(f, now, paused),
  ];
}

/** `2026-11-27T22:58:47Z`: an API time to the second, in UTC as the API gives it. */
function shortTime(iso: string): string {
  return escapeForTerminal(iso.replace(/\.\d+Z$/, 'Z'));
}

/** The last error, else the status last answered (`HTTP 200`), then when a pending forward is next attempted. */
function lastColumn(f: ForwardRow, now: number, paused: boolean): string {
  const result = f.lastError !== null ? escapeForTerminal(f.lastError) : f.lastStatus !== null ? `HTTP ${f.lastStatus}` : '';
  if (f.status === 'pending' && f.nextAttemptAt !== null) {
    const due = Date.parse(f.nextAttemptAt) - now;
    const next = paused
      ? 'waits: the destination is paused'
      : due <= 0
        ? 'next attempt now'
        : `next attempt in ${formatAge(due)}`;
    return result === '' ? next : `${result}; ${next}`;
  }
  return result === '' ? '-' : result;
}
