import { parseDuration } from '../platform/config/duration.js';
import type { DeliveryJson } from '../api/schemas.js';
import { ApiClient, asDelivery } from './api-client.js';
import { eventTypeText, formatBytes } from './delivery-line.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { eventStream } from './event-stream.js';
import {
  forwardUntilAnswered,
  ListenSummary,
  outcomeText,
  rawOrGone,
  stdoutColors,
  untilAnswered,
  type RetryPolicy,
} from './listen-forwarding.js';
import { defaultStatePath, readState, writeState } from './listen-state.js';
import { exitQuietlyOnClosedPipe, reportStatus, stopSignal, writeErr, writeOut } from './process-io.js';
import { SERVER_FLAGS, serverTarget, targetUrlFlag } from './server-target.js';
import { booleanFlag, integerFlag, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const listenSpec: CommandSpec = {
  name: 'listen',
  summary: 'forward every new delivery to a local URL, byte for byte',
  usage: [
    'listen --forward-to URL [--source S] [--retry-failed [--max-attempts N]] [--state FILE] [--timeout DURATION] [--url URL] [--token TOKEN]',
  ],
  description:
    'Follows the live stream and sends each delivery to --forward-to with its method, its headers (in order, as spelled) ' +
    "and its exact raw bytes, so the target can verify the provider's signature. The delivery's query string is " +
    'appended to the URL. Dropped: hop-by-hop headers (connection, keep-alive, transfer-encoding, te, trailer, upgrade, ' +
    'proxy-*), host, content-length and expect (set anew for the target), and headers Reception stored as [redacted]. ' +
    "Prints the target's status and latency for each; a 4xx or 5xx answer is a failure (red on a terminal, and " +
    'counted in the summary printed when listen stops, with the ids to send again with replay). ' +
    '--forward-to takes a URL, a port alone with or without a path (3000: http://127.0.0.1:3000/; 3000/hooks: ' +
    'http://127.0.0.1:3000/hooks, always this machine) or a host and port (localhost:3000/hooks).\n' +
    'Deliveries are forwarded one at a time, in order. When the target cannot be reached, times out or answers 502, 503 ' +
    'or 504, the same delivery is tried again with backoff (up to 15 s apart) until it goes through: nothing is skipped. ' +
    'A failure moves on to the next delivery, unless --retry-failed: then the same delivery is sent again with the same ' +
    'backoff, up to --max-attempts attempts in all (default 5; 0: until the target takes it), and counts as failed only ' +
    'when they are spent. When the server goes away, listen reconnects; a server that was never reached is an error.\n' +
    'The position (the seq of the last delivery the target answered) is saved in the state file after each one, and ' +
    'a restart resumes after it: deliveries that arrived while listen was stopped are forwarded, none twice. ' +
    'The first run starts at the present. The default state file is ~/.reception/listen-<hash>.json, one per server, ' +
    'source and target. Ctrl-C finishes the delivery in flight, then stops.',
  flags: [
    { name: 'forward-to', type: 'string', value: 'URL', help: 'Where to send each delivery (required).' },
    { name: 'source', type: 'string', value: 'S', help: 'Only deliveries to this source.' },
    {
      name: 'state',
      type: 'string',
      value: 'FILE',
      help: 'Where to keep the position (default ~/.reception/listen-<hash>.json).',
    },
    {
      name: 'retry-failed',
      type: 'boolean',
      help: 'Send a delivery that the target answered 4xx or 5xx again, with backoff, before moving on.',
    },
    {
      name: 'max-attempts',
      type: 'string',
      value: 'N',
      help: 'With --retry-failed: attempts in all for one delivery, 0 for no limit (default 5).',
    },
    {
      name: 'timeout',
      type: 'string',
      value: 'DURATION',
      help: 'How long the target has to answer, e.g. 10s (default 30s); then the delivery is tried again.',
    },
    ...SERVER_FLAGS,
  ],
  examples: [
    'reception listen --forward-to localhost:3000/webhooks/stripe --source stripe',
    'reception listen --forward-to 3000/webhooks --retry-failed --max-attempts 10',
    'reception listen --forward-to http://localhost:8000/hook --url https://hooks.example.com --token "$TOKEN"',
  ],
};

export async function runListen(argv: string[]): Promise<number> {
  const { values } = parseCommand(listenSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(listenSpec));
    return 0;
  }
  const target = serverTarget(values);
  const forwardTo = targetUrlFlag('--forward-to', stringFlag(values, 'forward-to'));
  const source = stringFlag(values, 'source');
  const timeoutText = stringFlag(values, 'timeout') ?? '30s';
  const timeoutMs = parseDuration(timeoutText);
  if (timeoutMs === undefined) throw new UsageError(`--timeout: expected a duration such as 10s or 2m, got "${timeoutText}".`);
  const statePath = stringFlag(values, 'state') ?? defaultStatePath(target.base, source, forwardTo.toString());
  const retryFailed = booleanFlag(values, 'retry-failed');
  if (!retryFailed && stringFlag(values, 'max-attempts') !== undefined) {
    throw new UsageError('--max-attempts goes with --retry-failed.');
  }
  const policy: RetryPolicy = { retryFailed, maxAttempts: integerFlag(values, 'max-attempts', 5, 0, 1000) };
  const color = stdoutColors();
  const summary = new ListenSummary();

  exitQuietlyOnClosedPipe();
  const signal = stopSignal(() => writeErr('stopping after the delivery in flight (Ctrl-C again to quit now)'));
  const api = new ApiClient(target);
  const save = (lastSeq: number): void =>
    writeState(statePath, {
      server: target.base,
      source: source ?? null,
      forwardTo: forwardTo.toString(),
      lastSeq,
      updatedAt: new Date().toISOString(),
    });

  let position: number;
  const saved = readState(statePath);
  if (saved === undefined) {
    const latest = await untilAnswered(api, () => api.latestSeq(source, signal), 'reading the inbox', signal);
    if (latest === undefined) return 0;
    position = latest;
    save(position);
    const of = source === undefined ? 'the inbox' : `source ${escapeForTerminal(source)}`;
    const present = position === 0 ? `${of} has no deliveries yet` : `after seq ${position}, the newest delivery of ${of}`;
    writeErr(`starting at the present (${present}); position kept in ${statePath}`);
  } else {
    position = saved.lastSeq;
    writeErr(`resuming after seq ${position} (position kept in ${statePath})`);
  }
  writeErr(
    `forwarding to ${forwardTo.toString()}${retryFailed ? `, failures retried (${policy.maxAttempts === 0 ? 'no limit' : `${policy.maxAttempts} attempts`})` : ''}`,
  );

  const url = new URL(`${target.base}/api/stream`);
  if (source !== undefined) url.searchParams.set('source', source);
  const events = eventStream({
    url: url.toString(),
    headers: api.headers(),
    lastEventId: String(position),
    signal,
    reached: api.reached,
    onStatus: (status) => reportStatus(status, url.toString()),
  });
  for await (const event of events) {
    if (event.event !== 'delivery') continue;
    const delivery = asDelivery(JSON.parse(event.data));
    if (delivery.seq <= position) continue;
    const raw = await untilAnswered(api, () => rawOrGone(api, delivery.id), `fetching the body of ${delivery.id}`, signal);
    if (raw === undefined) break;
    let line: string;
    if (raw === 'gone') {
      line = 'skipped: deleted from the inbox before it could be forwarded';
      summary.skipped += 1;
    } else {
      const result = await forwardUntilAnswered(forwardTo, delivery, raw, { timeoutMs, policy, signal });
      if (result === undefined) break;
      summary.add(delivery, result);
      line = outcomeText(result, color);
    }
    // Saved before it is printed: a line on the screen means the position is on disk.
    position = delivery.seq;
    save(position);
    await writeOut(`${describe(delivery)}  ${line}\n`);
  }
  writeErr(summary.text(forwardTo.toString()));
  return 0;
}

function describe(delivery: DeliveryJson): string {
  return [
    `seq ${delivery.seq}`,
    escapeForTerminal(delivery.method),
    escapeForTerminal(delivery.source),
    eventTypeText(delivery),
    formatBytes(delivery.size),
    escapeForTerminal(delivery.id),
  ].join('  ');
}
