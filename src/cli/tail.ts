import { ApiClient, ApiError, asDelivery } from './api-client.js';
import { FILTER_FLAGS, matchesFields, matchesText, readFilters, type CliFilters } from './filter-flags.js';
import type { DeliveryJson } from '../api/schemas.js';
import { deliveryColumns, deliveryLine } from './delivery-line.js';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { eventStream } from './event-stream.js';
import { exitQuietlyOnClosedPipe, reportStatus, stopSignal, writeOut } from './process-io.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { booleanFlag, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';
import { tailRefused } from './tail-refused.js';

export const tailSpec: CommandSpec = {
  name: 'tail',
  summary: 'print each new delivery as it arrives',
  usage: [
    'tail [--source S] [--event-type T] [--verification V] [--since T] [--until T] [-q TEXT] [--json] [--after SEQ]',
    '     [--refused] [--url URL] [--token TOKEN]',
  ],
  description:
    'Follows the live stream (GET /api/stream) and prints one line per delivery: time received, source, event type ' +
    '(- for none), method, size, id and the start of the body. Control characters and bidirectional overrides in ' +
    'payloads are printed as escapes (\\e, \\x9b, \\u202e), so a hostile payload cannot take over the terminal. ' +
    'The filters are those of the list (GET /api/deliveries) and choose which deliveries are printed; with -q, tail ' +
    'reads the raw body of each delivery that passes the others. ' +
    'When the connection drops, tail reconnects and resumes after the last delivery it printed (Last-Event-ID): ' +
    'nothing is skipped or printed twice. Connection messages go to stderr. Ctrl-C stops it. ' +
    'With --refused it prints the requests the webhook route refused instead (GET /api/refusals, read every second): ' +
    'time, source (- for a name that is not valid), method, status and code, size, the detail the sender was answered, ' +
    'and the start of the body.',
  flags: [
    ...FILTER_FLAGS,
    { name: 'json', type: 'boolean', help: 'Print each Delivery as one line of JSON (NDJSON) instead.' },
    {
      name: 'after',
      type: 'string',
      value: 'SEQ',
      help: "Start after this seq instead of now (0: the whole inbox, then live); with --refused, a refusal's seq (0: every refusal kept).",
    },
    { name: 'refused', type: 'boolean', help: 'Print each refused request instead (why a webhook did not arrive).' },
    ...SERVER_FLAGS,
  ],
  examples: [
    'reception tail',
    'reception tail --source github --url https://hooks.example.com --token "$TOKEN"',
    'reception tail --json | jq .body',
    'reception tail --refused --source stripe',
    "reception tail --source stripe --event-type 'invoice.*' -q cus_123",
  ],
};

export async function runTail(argv: string[]): Promise<number> {
  const { values } = parseCommand(tailSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(tailSpec));
    return 0;
  }
  const target = serverTarget(values);
  const filters = readFilters(values);
  const { source } = filters;
  const after = stringFlag(values, 'after');
  if (after !== undefined && !/^\d{1,15}$/.test(after))
    throw new UsageError(`--after: expected a seq (a whole number), got "${after}".`);
  const json = booleanFlag(values, 'json');

  exitQuietlyOnClosedPipe();
  const signal = stopSignal();
  if (booleanFlag(values, 'refused')) {
    return tailRefused({ target, source, after: after === undefined ? undefined : Number(after), json, signal });
  }
  const url = new URL(`${target.base}/api/stream`);
  if (source !== undefined) url.searchParams.set('source', source);
  const events = eventStream({
    url: url.toString(),
    headers: { authorization: `Bearer ${target.token}` },
    ...(after === undefined ? {} : { lastEventId: after }),
    signal,
    onStatus: (status) => reportStatus(status, url.toString()),
  });
  const api = new ApiClient(target);
  const columns = deliveryColumns();
  for await (const event of events) {
    if (event.event !== 'delivery') continue;
    const delivery = asDelivery(JSON.parse(event.data));
    if (!(await passes(api, delivery, filters))) continue;
    if (json) {
      // The server's JSON as sent (one line, numbers untouched), with unsafe characters as \u escapes.
      await writeOut(`${escapeJsonForTerminal(event.data.replace(/[\r\n]+/g, ' '))}\n`);
    } else {
      const width = process.stdout.isTTY ? process.stdout.columns : undefined;
      await writeOut(`${deliveryLine(delivery, width, columns)}\n`);
    }
  }
  return 0;
}

/** Whether a streamed delivery passes the filters; the text is looked for in its raw body (read only then) and header values. */
async function passes(api: ApiClient, delivery: DeliveryJson, filters: CliFilters): Promise<boolean> {
  if (!matchesFields(delivery, filters)) return false;
  if (filters.query === undefined) return true;
  try {
    return matchesText(delivery, await api.getRaw(delivery.id), filters.query);
  } catch (error) {
    // Deleted since it was streamed: nothing to print.
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
}
