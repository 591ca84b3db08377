import type { Verification } from '../deliveries/delivery-store.js';
import { destinationOf, LOG_BASE, type Logger } from '../platform/observe/logger.js';

/** The fields of a webhook request's log line, in the order they are written. */
export interface WebhookLogFields {
  req: { method: string | undefined; path: string; remoteAddress: string | undefined };
  status: number;
  ms: number;
  source: string | undefined;
  outcome: string;
  id: string | undefined;
  size: number | undefined;
  verification: Verification | undefined;
}

/** Writes the `webhook` line of one request (level info). */
export type WebhookLog = (fields: WebhookLogFields) => void;

const MESSAGE = 'webhook';
/** pino's info level. */
const INFO = 30;

/**
 * The webhook route's log line, one per request. For a logger made by
 * createLogger, the line is rendered here, field by field, instead of by
 * pino's generic loop over the object's keys (each value typed, each key
 * escaped, each object stringified, the time formatted anew): the same JSON
 * text, with the same fields in the same order, at about a third of the
 * cost (bench/RESULTS.md at commit 2d24709, "The answer path, measured again"). It goes to
 * the logger's destination, so it keeps its place among the other lines.
 * Any other logger gets `logger.info(fields, 'webhook')`.
 */
export function createWebhookLog(logger: Logger): WebhookLog {
  const destination = destinationOf(logger);
  if (destination === undefined) return (fields) => logger.info(fields, MESSAGE);
  const levelAndTime = new TimeField(`{"level":${INFO},"time":"`);
  const base = Object.entries(LOG_BASE)
    .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join('');
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    destination.write(levelAndTime.now() + base + webhookFields(fields) + `,"msg":"${MESSAGE}"}\n`);
  };
}

/**
 * `prefix` and pino's isoTime (`new Date().toISOString()`), made once per
 * millisecond: the answers of one commit are written in the same one.
 */
class TimeField {
  private ms = Number.NaN;
  private text = '';
  constructor(private readonly prefix: string) {}

  now(): string {
    const ms = Date.now();
    if (ms !== this.ms) {
      this.ms = ms;
      this.text = `${this.prefix}${new Date(ms).toISOString()}"`;
    }
    return this.text;
  }
}

/** `,"req":{…},"status":…`: each field as JSON.stringify writes it, an undefined one left out, as pino does. */
function webhookFields(fields: WebhookLogFields): string {
  const { req } = fields;
  let text = `,"req":{`;
  let separator = '';
  if (req.method !== undefined) {
    text += `"method":${JSON.stringify(req.method)}`;
    separator = ',';
  }
  text += `${separator}"path":${JSON.stringify(req.path)}`;
  if (req.remoteAddress !== undefined) text += `,"remoteAddress":${JSON.stringify(req.remoteAddress)}`;
  text += `},"status":${fields.status},"ms":${number(fields.ms)}`;
  if (fields.source !== undefined) text += `,"source":${JSON.stringify(fields.source)}`;
  text += `,"outcome":${JSON.stringify(fields.outcome)}`;
  if (fields.id !== undefined) text += `,"id":${JSON.stringify(fields.id)}`;
  if (fields.size !== undefined) text += `,"size":${number(fields.size)}`;
  if (fields.verification !== undefined) text += `,"verification":${JSON.stringify(fields.verification)}`;
  return text;
}

/** A number as pino writes it: `null` when not finite. */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
