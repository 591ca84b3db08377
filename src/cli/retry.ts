import { ApiClient } from './api-client.js';
import { parseSince } from './export.js';
import { OutboxApi, type RetryRequest } from './outbox-api.js';
import { writeErr } from './process-io.js';
import { SERVER_FLAGS, serverTarget } from './server-target.js';
import { booleanFlag, parseCommand, renderHelp, stringFlag, UsageError, type CommandSpec, type FlagValues } from './usage.js';

type FailedSelection = Exclude<RetryRequest, { ids: string[] }>;

/** The most ids one call takes (the API's `ids` holds at most 10,000); more go in several calls. */
const MAX_IDS = 10_000;

export const retrySpec: CommandSpec = {
  name: 'retry',
  summary: 'send failed forwards again, with a fresh attempt budget',
  usage: [
    'retry <forward-id>... [--url URL] [--token TOKEN]',
    'retry --failed [--destination D] [--source S] [--since T] [--until T] [--url URL] [--token TOKEN]',
  ],
  description:
    'Makes failed forwards (the dead letters) pending again with a fresh attempt budget, through POST ' +
    '/api/forwards/retry, and prints how many were retried. Give forward ids (from "reception forwards"), or ' +
    '--failed for every failed forward, narrowed by destination, source, and when the forward was created: ' +
    '--since and --until take an RFC 3339 time (2026-11-22T00:00:00Z) or a duration back from now (24h, 7d). ' +
    'A forward that is not failed is left alone and not counted. An unknown --destination is an error (exit 1).',
  flags: [
    { name: 'failed', type: 'boolean', help: 'Retry every failed forward that the other flags select.' },
    { name: 'destination', type: 'string', value: 'D', help: 'With --failed: only forwards to this destination.' },
    { name: 'source', type: 'string', value: 'S', help: 'With --failed: only forwards of deliveries to this source.' },
    { name: 'since', type: 'string', value: 'T', help: 'With --failed: only forwards created at or after T.' },
    { name: 'until', type: 'string', value: 'T', help: 'With --failed: only forwards created before T.' },
    ...SERVER_FLAGS,
  ],
  positionals: Number.MAX_SAFE_INTEGER,
  examples: [
    'reception retry --failed --destination app',
    'reception retry --failed --source stripe --since 24h',
    'reception retry 01970c1e-8a6b-7d3e-9f10-4b2c6d8e0a12',
    'reception forwards --status failed --json | jq -r .id | xargs reception retry',
  ],
};

export async function runRetry(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(retrySpec, argv);
  if (values.help === true) {
    process.stdout.write(renderHelp(retrySpec));
    return 0;
  }
  const failed = booleanFlag(values, 'failed');
  const filters = ['destination', 'source', 'since', 'until'].filter((name) => stringFlag(values, name) !== undefined);
  if (positionals.length > 0 && failed) {
    throw new UsageError('give forward ids or --failed, not both.');
  }
  if (positionals.length > 0 && filters.length > 0) {
    throw new UsageError(`--${filters[0] ?? ''} selects failed forwards: it goes with --failed, not with forward ids.`);
  }
  if (positionals.length === 0 && !failed) {
    throw new UsageError('which forwards? Give their ids (reception retry <forward-id>...) or --failed (every failed forward).');
  }
  const empty = positionals.find((id) => id.trim() === '');
  if (empty !== undefined) throw new UsageError('a forward id is empty.');

  const outbox = new OutboxApi(new ApiClient(serverTarget(values)));
  let retried = 0;
  if (positionals.length > 0) {
    const ids = [...new Set(positionals)];
    for (let start = 0; start < ids.length; start += MAX_IDS)
      retried += await outbox.retry({ ids: ids.slice(start, start + MAX_IDS) });
    if (retried < ids.length) {
      const left = ids.length - retried;
      writeErr(
        `${left} of the ${ids.length} forwards ${left === 1 ? 'was' : 'were'} not retried: only a failed forward is, and an unknown id is skipped.`,
      );
    }
  } else {
    const request = failedSelection(values);
    if (request.destination !== undefined) await outbox.requireDestination(request.destination);
    retried = await outbox.retry(request);
  }
  process.stdout.write(`Retried ${retried} ${retried === 1 ? 'forward' : 'forwards'}.\n`);
  return 0;
}

function failedSelection(values: FlagValues): FailedSelection {
  const time = (name: 'since' | 'until'): string | undefined => {
    const text = stringFlag(values, name);
    if (text === undefined) return undefined;
    try {
      return new Date(parseSince(text)).toISOString();
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(error.message.replace(/^--since/, `--${name}`));
      throw error;
    }
  };
  const destination = stringFlag(values, 'destination');
  const source = stringFlag(values, 'source');
  const since = time('since');
  const until = time('until');
  return {
    status: 'failed',
    ...(destination === undefined ? {} : { destination }),
    ...(source === undefined ? {} : { source }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
  };
}
