import { escapeForTerminal } from '../text/terminal-safe.js';

/**
 * The log for a person at a terminal: one short line per entry instead of
 * pino's JSON, made from the same JSON line.
 *
 *   17:11:15.226  200  github  push  1.2 KiB  8c1f…  stored
 *   17:11:16.002  401  stripe  -  512 B  -  signature_invalid (bad signature)
 *   17:11:17.310  200  GET /api/deliveries  3.2 ms
 *   17:11:18.000  WARN  RECEPTION_RETENSION is not a Reception setting…  variable=RECEPTION_RETENSION
 *
 * A small formatter of our own rather than pino-pretty: a webhook's line is
 * built from its fields (time, status, source, event type, size, id), and
 * every value from a sender (a source name, a path, an event type) is
 * escaped for the terminal, as `reception tail` does, so that a hostile
 * name cannot drive the terminal of the person reading the log.
 * pino-pretty prints strings as they are.
 */

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Fields shown in a line's own layout, or never: not repeated as key=value. */
const LAID_OUT = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname', 'req', 'status', 'ms', 'reqId']);
const WEBHOOK_FIELDS = new Set(['source', 'outcome', 'id', 'size', 'verification', 'eventType']);

type Entry = Record<string, unknown>;

export interface PrettyOptions {
  color: boolean;
}

/** One JSON log line as a short readable line; a line that is not JSON is passed on as it is. */
export function prettyLine(line: string, options: PrettyOptions): string {
  let entry: Entry;
  try {
    const parsed = JSON.parse(line) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return line;
    entry = parsed as Entry;
  } catch {
    return line;
  }
  const paint = painter(options.color);
  const time = paint('dim', clock(entry.time));
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  let text: string;
  if (msg === 'webhook' || msg === 'webhook failed') text = webhookLine(entry, paint);
  else if (msg === 'request' && typeof entry.status === 'number') text = requestLine(entry, paint);
  else text = otherLine(entry, level, msg, paint);
  if (level >= 50 && typeof entry.err === 'object' && entry.err !== null) {
    const err = entry.err as Entry;
    if (typeof err.message === 'string') text += `  ${paint('red', safe(err.message))}`;
  }
  return `${time}  ${text}\n`;
}

type Paint = (style: 'dim' | 'red' | 'green' | 'yellow' | 'bold', text: string) => string;

function painter(color: boolean): Paint {
  const codes = { dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], bold: [1, 22] } as const;
  return (style, text) => (color ? `\u001b[${codes[style][0]}m${text}\u001b[${codes[style][1]}m` : text);
}

/** `17:11:15.226`, the local time of day: a terminal's reader knows the date. */
function clock(time: unknown): string {
  const date = new Date(typeof time === 'string' || typeof time === 'number' ? time : Date.now());
  if (Number.isNaN(date.getTime())) return String(time);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

function statusText(status: unknown, paint: Paint): string {
  if (typeof status !== 'number') return '---';
  const text = String(status);
  return status >= 500 ? paint('red', text) : status >= 400 ? paint('yellow', text) : paint('green', text);
}

/** "512 B", "1.2 KiB" */
function bytes(size: unknown): string {
  if (typeof size !== 'number') return '-';
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MiB`;
}

function safe(value: unknown): string {
  return escapeForTerminal(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
}

/** time, status, source, event type (when there is one), size, id, and the outcome unless it is `stored`. */
function webhookLine(entry: Entry, paint: Paint): string {
  const parts = [statusText(entry.status, paint), paint('bold', entry.source === undefined ? '-' : safe(entry.source))];
  if (typeof entry.eventType === 'string') parts.push(safe(entry.eventType));
  parts.push(bytes(entry.size), entry.id === undefined ? '-' : safe(entry.id));
  const outcome = typeof entry.outcome === 'string' ? entry.outcome : '';
  const verification = entry.verification as { status?: unknown; reason?: unknown } | undefined;
  const reason = verification?.status === 'failed' && verification.reason !== undefined ? ` (${safe(verification.reason)})` : '';
  if (outcome !== 'stored' || reason !== '') parts.push(`${safe(outcome)}${reason}`);
  return parts.join('  ');
}

function requestLine(entry: Entry, paint: Paint): string {
  const req = (entry.req ?? {}) as { method?: unknown; path?: unknown };
  const ms = typeof entry.ms === 'number' ? `${entry.ms} ms` : '';
  return [statusText(entry.status, paint), `${safe(req.method ?? '')} ${safe(req.path ?? '')}`, ms]
    .filter((p) => p !== '')
    .join('  ');
}

/** The message, then the other fields as key=value. */
function otherLine(entry: Entry, level: number, msg: string, paint: Paint): string {
  const label = level >= 40 ? `${paint(level >= 50 ? 'red' : 'yellow', LEVELS[level] ?? String(level))}  ` : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !LAID_OUT.has(key) && key !== 'err' && !(msg.startsWith('webhook') && WEBHOOK_FIELDS.has(key)))
    .map(([key, value]) => `${key}=${safe(value)}`);
  const req = entry.req as { method?: unknown; path?: unknown } | undefined;
  const where = req === undefined ? '' : `  ${safe(req.method ?? '')} ${safe(req.path ?? '')}`;
  const status = typeof entry.status === 'number' ? `${statusText(entry.status, paint)}  ` : '';
  return `${label}${status}${safe(msg)}${where}${fields.length === 0 ? '' : `  ${paint('dim', fields.join(' '))}`}`;
}
