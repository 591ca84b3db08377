import type { Static } from 'typebox';
import type { DeliveryForwardsSchema } from '../api/forward-schemas.js';
import { escapeForTerminal, escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { ApiClient, ApiError, isRecord, malformed } from './api-client.js';
import { flushOut, writeOut } from './process-io.js';
import { CliError } from './usage.js';

/**
 * `reception forwards --delivery ID`: one delivery's forwards, each with its
 * attempts and what the destination answered to each (CONTRACT 6, "The
 * destination's answer is kept"), from `GET /api/deliveries/{id}/forwards`.
 * The answer is the destination's, so every line of it is escaped for the
 * terminal (`\e`, `\u202e`), as `tail` prints payloads.
 */

type ServerForward = Static<typeof DeliveryForwardsSchema>['items'][number];
/** One forward of the delivery; its status passed on as the server wrote it. */
export type DeliveryForward = Omit<ServerForward, 'status'> & { status: string };
type Attempt = ServerForward['attempts'][number];
type Answer = NonNullable<Attempt['response']>;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const integer = (value: unknown): number | null => (typeof value === 'number' ? value : null);

export async function printDeliveryForwards(api: ApiClient, deliveryId: string, json: boolean): Promise<number> {
  const path = `/api/deliveries/${encodeURIComponent(deliveryId)}/forwards`;
  let body: unknown;
  try {
    body = await api.call(path);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404)
      throw new CliError(`there is no delivery ${escapeForTerminal(JSON.stringify(deliveryId))}.`);
    throw error;
  }
  if (!isRecord(body) || !Array.isArray(body.items)) throw malformed(path);
  const forwards = body.items.filter(isRecord).map(forwardOf);
  if (json) for (const forward of forwards) await writeOut(`${escapeJsonForTerminal(JSON.stringify(forward))}\n`);
  else for (const forward of forwards) await writeOut(forwardLines(forward).join('\n') + '\n');
  await flushOut();
  if (forwards.length === 0) process.stderr.write('The delivery is forwarded nowhere.\n');
  return 0;
}

function forwardOf(item: Record<string, unknown>): DeliveryForward {
  return {
    id: String(item.id),
    destination: String(item.destination),
    status: String(item.status),
    nextAttemptAt: text(item.nextAttemptAt),
    attempts: (Array.isArray(item.attempts) ? item.attempts : []).filter(isRecord).map((a) => ({
      n: integer(a.n) ?? 0,
      startedAt: String(a.startedAt),
      durationMs: integer(a.durationMs) ?? 0,
      status: integer(a.status),
      error: text(a.error),
      response: answerOf(a.response),
      transform: transformOf(a.transform),
    })),
  };
}

function transformOf(value: unknown): { name: string; version: string } | null {
  if (!isRecord(value) || typeof value.name !== 'string') return null;
  return { name: value.name, version: String(value.version) };
}

function answerOf(value: unknown): Answer | null {
  if (!isRecord(value) || !Array.isArray(value.headers)) return null;
  const headers = value.headers
    .filter((pair): pair is unknown[] => Array.isArray(pair) && pair.length === 2)
    .map(([name, header]): [string, string] => [String(name), String(header)]);
  return { headers, body: text(value.body) ?? '', bodyTruncated: value.bodyTruncated === true };
}

/** A forward's line, then one per attempt, each followed by its answer (`< ` before each line, as curl -v shows one). */
export function forwardLines(forward: DeliveryForward): string[] {
  const count = `${forward.attempts.length} ${forward.attempts.length === 1 ? 'attempt' : 'attempts'}`;
  const next = forward.status === 'pending' && forward.nextAttemptAt !== null ? `  next attempt at ${forward.nextAttemptAt}` : '';
  const lines = [
    `${escapeForTerminal(forward.id)}  ${escapeForTerminal(forward.destination)}  ${escapeForTerminal(forward.status)}  ${count}${next}`,
  ];
  for (const attempt of forward.attempts) {
    const status = attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`;
    // The error of an answered attempt is its status again (`HTTP 500`): said once.
    const error = attempt.error === null || attempt.error === status ? '' : `  ${escapeForTerminal(attempt.error)}`;
    // The transform that ran for it (CONTRACT 10), as name@version.
    const transform =
      attempt.transform === null
        ? ''
        : `  transform ${escapeForTerminal(`${attempt.transform.name}@${attempt.transform.version}`)}`;
    lines.push(
      `  attempt ${attempt.n}  ${escapeForTerminal(attempt.startedAt)}  ${status}  ${attempt.durationMs} ms${transform}${error}`,
    );
    if (attempt.response !== null) lines.push(...answerLines(attempt.response));
  }
  return lines;
}

function answerLines(answer: Answer): string[] {
  const lines = answer.headers.map(([name, value]) => `    < ${escapeForTerminal(name)}: ${escapeForTerminal(value)}`);
  if (answer.body !== '') {
    lines.push('    <');
    // Line breaks stay line breaks; every other control character becomes an escape.
    for (const line of answer.body.replace(/\r\n/g, '\n').split('\n')) lines.push(`    < ${escapeForTerminal(line)}`);
  }
  if (answer.bodyTruncated) lines.push('    (the first 4 KiB of a longer body)');
  return lines;
}
