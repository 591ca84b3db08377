import { nearestWithin } from '../platform/text/edit-distance.js';
import { escapeForTerminal, escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { ApiClient } from './api-client.js';
import { OutboxApi, type DestinationRow } from './outbox-api.js';
import { exitQuietlyOnClosedPipe, flushOut, writeErr, writeOut } from './process-io.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { alignColumns, formatAge } from './table.js';
import { booleanFlag, parseCommand, renderHelp, UsageError, type CommandSpec } from './usage.js';

const ACTIONS = ['pause', 'resume'] as const;

export const destinationsSpec: CommandSpec = {
  name: 'destinations',
  summary: 'show where deliveries are forwarded, and pause or resume a destination',
  usage: [
    'destinations [--json] [--url URL] [--token TOKEN]',
    'destinations pause <name> [--url URL] [--token TOKEN]',
    'destinations resume <name> [--url URL] [--token TOKEN]',
  ],
  description:
    'Without an action, prints one line per destination (GET /api/destinations): its name, kind (http, pull, nats, ' +
    'amqp, redis, or removed when the config no longer names it but forwards remain), URL (without credentials or ' +
    "query), a broker's connection (connected, or why not; a column shown when there is a broker), " +
    'its circuit (closed, "closed (N failed)" with the failed attempts in a row, "open (probe in 25s)" until one ' +
    'forward is tried, or "half open" while it is), whether it is paused, how many forwards are pending (not yet settled) and failed, the age of the oldest pending one, ' +
    'and the last error. "pause" stops attempts to a destination: its forwards stay pending, and the pause outlives ' +
    'restarts, until "resume". An unknown name is an error (exit 1).',
  flags: [
    { name: 'json', type: 'boolean', help: 'Print each destination as one line of JSON (NDJSON) instead.' },
    ...SERVER_FLAGS,
  ],
  positionals: 2,
  examples: ['reception destinations', 'reception destinations pause app', 'reception destinations resume app'],
};

export async function runDestinations(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(destinationsSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(destinationsSpec));
    return 0;
  }
  const [actionText, name] = positionals;
  const action = actionText === undefined ? undefined : actionOf(actionText);
  if (action !== undefined && (name === undefined || name === '')) {
    throw new UsageError(`which destination? reception destinations ${action} <name>.`);
  }
  if (action !== undefined && booleanFlag(values, 'json'))
    throw new UsageError('--json goes with the list, not with pause or resume.');
  const outbox = new OutboxApi(new ApiClient(serverTarget(values)));

  if (action !== undefined && name !== undefined) {
    await outbox.setPaused(name, action === 'pause');
    const state = (await outbox.destinations()).find((d) => d.name === name);
    const pending = state === undefined ? '' : ` (${state.pending} pending, ${state.failed} failed)`;
    process.stdout.write(
      action === 'pause'
        ? `Paused ${escapeForTerminal(name)}: its forwards wait until "reception destinations resume ${escapeForTerminal(name)}"${pending}.\n`
        : `Resumed ${escapeForTerminal(name)}${pending}.\n`,
    );
    return 0;
  }

  exitQuietlyOnClosedPipe();
  const destinations = await outbox.destinations();
  if (booleanFlag(values, 'json')) {
    for (const d of destinations) await writeOut(`${escapeJsonForTerminal(JSON.stringify(d))}\n`);
  } else if (destinations.length > 0) {
    const now = Date.now();
    // A broker's connection gets a column only where there is a broker.
    const brokers = destinations.some((d) => d.connection !== null);
    const header = [
      'NAME',
      'KIND',
      'URL',
      ...(brokers ? ['CONNECTION'] : []),
      'CIRCUIT',
      'PAUSED',
      'PENDING',
      'FAILED',
      'OLDEST PENDING',
      'LAST ERROR',
    ];
    const rows = destinations.map((d) => destinationCells(d, now, brokers));
    await writeOut(`${alignColumns([header, ...rows]).join('\n')}\n`);
  }
  await flushOut();
  if (destinations.length === 0) writeErr('The server has no destinations: name them under "destinations" in the config file.');
  return 0;
}

function actionOf(text: string): (typeof ACTIONS)[number] {
  const action = ACTIONS.find((a) => a === text);
  if (action !== undefined) return action;
  const near = nearestWithin(text, ACTIONS, 3);
  throw new UsageError(
    `unknown action "${escapeForTerminal(text)}"${near === undefined ? '' : ` (did you mean "${near}"?)`}: ` +
      'reception destinations lists them; "pause <name>" and "resume <name>" act on one.',
  );
}

/** The cells of one destination's line, escaped. */
export function destinationCells(d: DestinationRow, now: number, brokers = false): string[] {
  return [
    escapeForTerminal(d.name),
    escapeForTerminal(d.kind),
    d.url === null ? '-' : escapeForTerminal(d.url),
    ...(brokers ? [connectionCell(d.connection)] : []),
    circuitCell(d.circuit, now),
    d.paused ? 'yes' : 'no',
    String(d.pending),
    String(d.failed),
    d.oldestPendingAt === null ? '-' : formatAge(now - Date.parse(d.oldestPendingAt)),
    d.lastError === null ? '-' : escapeForTerminal(d.lastError),
  ];
}

/** A circuit: closed (with its failures in a row, if any), open until when, or half open (docs/circuits.md). */
export function circuitCell(circuit: DestinationRow['circuit'], now: number): string {
  const failures = circuit.consecutiveFailures;
  if (circuit.state === 'closed') return failures === 0 ? 'closed' : `closed (${failures} failed)`;
  if (circuit.state === 'half_open') return 'half open';
  if (circuit.until === null) return 'open';
  const left = Date.parse(circuit.until) - now;
  return left > 0 ? `open (probe in ${formatAge(left)})` : 'open (probe due)';
}

/** A broker's connection: its state, and why when it is not connected; `-` for an HTTP or pull destination. */
function connectionCell(connection: DestinationRow['connection']): string {
  if (connection === null) return '-';
  if (connection.state === 'connected' || connection.lastError === null) return connection.state;
  return escapeForTerminal(`${connection.state} (${connection.lastError})`);
}
