import { ApiClient, isRecord, malformed } from './api-client.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { booleanFlag, parseCommand, renderHelp, UsageError, type CommandSpec } from './usage.js';
import { escapeForTerminal, escapeJsonForTerminal } from '../platform/text/terminal-safe.js';

export const transformSpec: CommandSpec = {
  name: 'transform',
  summary: 'try a transform on a stored delivery: its output (or error) and its console.log lines',
  usage: ['transform <name> <delivery> [--json] [--url URL] [--token TOKEN]'],
  description:
    'Runs the transform of the config in force (CONTRACT 10) on a stored delivery, named by its id or seq, through ' +
    'POST /api/transforms/{name}/run, and prints what it would send: the body and headers, or that it drops the ' +
    'delivery (null: the forward is cancelled), or the error; then the console.log lines. Nothing is sent anywhere. ' +
    'Exits 0 for an output or a drop, 1 when the transform failed, the transform or delivery is unknown, or the server ' +
    'cannot be reached. --json prints the API answer as it is.',
  flags: [{ name: 'json', type: 'boolean', help: 'Print the API answer as JSON (one line).' }, ...SERVER_FLAGS],
  positionals: 2,
  examples: ['reception transform slack-text 42', 'reception transform slack-text 019ab2c4-7f10-7c3e-9a51-3c2f0b9e8d41 --json'],
};

export async function runTransform(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(transformSpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(transformSpec));
    return 0;
  }
  const [name, delivery] = positionals;
  if (name === undefined || name === '' || delivery === undefined || delivery === '') {
    throw new UsageError('which transform, and which delivery? reception transform <name> <delivery-id-or-seq>.', 'transform');
  }
  const path = `/api/transforms/${encodeURIComponent(name)}/run`;
  const answer = await new ApiClient(serverTarget(values)).call(path, { method: 'POST', body: { deliveryId: delivery } });
  if (!isRecord(answer) || !Array.isArray(answer.logs)) throw malformed(path);
  if (booleanFlag(values, 'json')) {
    process.stdout.write(`${escapeJsonForTerminal(JSON.stringify(answer))}\n`);
    return 'error' in answer ? 1 : 0;
  }
  const lines: string[] = [];
  const version = typeof answer.version === 'string' ? ` (version ${answer.version})` : '';
  const took = typeof answer.durationMs === 'number' ? `, ${answer.durationMs.toFixed(2)} ms` : '';
  lines.push(`${escapeForTerminal(name)}${version} on delivery ${escapeForTerminal(delivery)}${took}`);
  if (typeof answer.error === 'string') lines.push(`error: ${escapeForTerminal(answer.error)}`);
  else if (answer.output === null)
    lines.push('dropped: the transform returned null (the forward would be cancelled, nothing sent)');
  else if (isRecord(answer.output)) {
    const { body, headers } = answer.output;
    lines.push(
      body === undefined
        ? 'body: (none: the raw bytes are sent as received)'
        : typeof body === 'string'
          ? `body (text, sent with the original Content-Type): ${escapeForTerminal(JSON.stringify(body))}`
          : `body (sent as application/json): ${escapeJsonForTerminal(JSON.stringify(body, null, 2))}`,
    );
    for (const [header, value] of Object.entries(isRecord(headers) ? headers : {})) {
      lines.push(`header: ${escapeForTerminal(header)}: ${escapeForTerminal(String(value))}`);
    }
  } else throw malformed(path);
  const logs = answer.logs.map((line) => escapeForTerminal(String(line)));
  lines.push(logs.length === 0 ? 'console.log: (nothing)' : 'console.log:', ...logs.map((line) => `  ${line}`));
  const text = `${lines.join('\n')}\n`;
  if (typeof answer.error === 'string') {
    process.stderr.write(text);
    return 1;
  }
  process.stdout.write(text);
  return 0;
}
