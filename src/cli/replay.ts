import { parseDuration } from '../platform/config/duration.js';
import { ApiClient } from './api-client.js';
import { describeError } from './backoff.js';
import { formatBytes } from './delivery-line.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { forwardDelivery, targetFor } from './forward.js';
import { SERVER_FLAGS, serverTarget, targetUrlFlag } from './server-target.js';
import { CliError, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec } from './usage.js';

export const replaySpec: CommandSpec = {
  name: 'replay',
  summary: 'send one stored delivery again',
  usage: ['replay <id or seq> --to URL [--timeout DURATION] [--url URL] [--token TOKEN]'],
  description:
    'Sends the delivery with this id (or this seq, the number the page shows) to --to exactly as listen forwards it: same method, headers in order (minus ' +
    "hop-by-hop ones, host, content-length, expect and [redacted] values), the delivery's query string appended to the " +
    "URL, and the exact raw bytes, so signatures still verify. Prints the target's status and latency. " +
    'Exits 0 when the target answers 2xx, 1 otherwise.',
  flags: [
    {
      name: 'to',
      type: 'string',
      value: 'URL',
      help: 'Where to send the delivery (required): a URL, a port alone with or without a path (3000/webhooks: http://127.0.0.1:3000/webhooks) or a host and port.',
    },
    { name: 'timeout', type: 'string', value: 'DURATION', help: 'How long the target has to answer (default 30s).' },
    ...SERVER_FLAGS,
  ],
  positionals: 1,
  examples: [
    'reception replay 0b6c5e1e-3f0a-4c1e-9d57-2b1f4c7a9e10 --to http://127.0.0.1:3000/webhooks',
    'reception replay 42 --to 3000/webhooks',
  ],
};

export async function runReplay(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(replaySpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(replaySpec));
    return 0;
  }
  // `#42` as the page shows a seq, when quoted (unquoted, a shell takes it as a comment).
  const id = positionals[0]?.replace(/^#(?=\d+$)/, '');
  if (id === undefined || id === '')
    throw new UsageError('which delivery? Give its id or seq: reception replay <id or seq> --to URL.', 'replay');
  const to = targetUrlFlag('--to', stringFlag(values, 'to'));
  const timeoutText = stringFlag(values, 'timeout') ?? '30s';
  const timeoutMs = parseDuration(timeoutText);
  if (timeoutMs === undefined) throw new UsageError(`--timeout: expected a duration such as 10s or 2m, got "${timeoutText}".`);

  const api = new ApiClient(serverTarget(values));
  const delivery = await api.getDelivery(id);
  // By the id the server answered with: the one given may be a seq.
  const raw = await api.getRaw(delivery.id);
  const url = targetFor(to, delivery.query);
  let result;
  try {
    result = await forwardDelivery(to, delivery, raw, { timeoutMs });
  } catch (error) {
    throw new CliError(`could not send to ${url.toString()}: ${describeError(error)}`);
  }
  process.stdout.write(
    `${escapeForTerminal(delivery.method)} ${url.toString()}  (${formatBytes(raw.length)}, delivery ${escapeForTerminal(delivery.id)})` +
      `  -> ${result.status} ${escapeForTerminal(result.statusText)}  ${result.ms} ms\n`,
  );
  return result.status >= 200 && result.status < 300 ? 0 : 1;
}
