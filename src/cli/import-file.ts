import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { checkSourceName } from '../platform/http/source-name.js';
import type { NewDelivery, VerificationStatus } from '../deliveries/delivery-store.js';
import { eventTypeOf, keptEventType } from '../event-types/event-type.js';
import { storedEventTypeSubject } from '../event-types/event-type-of-delivery.js';
import { escapeForTerminal } from '../platform/text/terminal-safe.js';
import { CliError } from './usage.js';

/**
 * Reading a file written by `reception export --raw`: one Delivery JSON
 * object per line with its body bytes in `raw` (base64). The file may be
 * large (its bodies up to 5 MiB each), so it is read twice: once through,
 * checking every line and noting where each is and its seq, then line by
 * line in seq order (an export is newest first; an import goes oldest
 * first, so that the new inbox keeps the order).
 */

/** Where one delivery's line is in the file. */
export interface LineIndex {
  line: number;
  seq: number;
  id: string;
  offset: number;
  length: number;
}

/** Every line of the file checked, and where each is, oldest delivery (lowest seq) first. Throws CliError naming the first bad line. */
export async function indexFile(path: string): Promise<LineIndex[]> {
  const entries: LineIndex[] = [];
  const ids = new Map<string, number>();
  let pending: Buffer[] = [];
  let pendingStart = 0;
  let position = 0;
  let lineNumber = 0;
  const take = (bytes: Buffer, offset: number): void => {
    lineNumber += 1;
    const text = bytes.toString('utf8').trim();
    if (text === '') return;
    const delivery = parseLine(text, lineNumber);
    const before = ids.get(delivery.id);
    if (before !== undefined) throw lineError(lineNumber, `the id ${quote(delivery.id)} is on line ${before} too`);
    ids.set(delivery.id, lineNumber);
    entries.push({ line: lineNumber, seq: delivery.seq, id: delivery.id, offset, length: bytes.length });
  };
  try {
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, newline);
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        take(line, pending.length === 0 ? position + start : pendingStart);
        pending = [];
        start = newline + 1;
      }
      if (start < chunk.length) {
        if (pending.length === 0) pendingStart = position + start;
        pending.push(chunk.subarray(start));
      }
      position += chunk.length;
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (pending.length > 0) take(Buffer.concat(pending), pendingStart);
  const bySeq = [...entries].sort((a, b) => a.seq - b.seq);
  for (let i = 1; i < bySeq.length; i++) {
    const [a, b] = [bySeq[i - 1], bySeq[i]];
    if (a !== undefined && b !== undefined && a.seq === b.seq) throw lineError(b.line, `seq ${b.seq} is on line ${a.line} too`);
  }
  return bySeq;
}

/** Reads the lines of `entries` from the file, in the order given. */
export function* readEntries(path: string, entries: readonly LineIndex[]): Generator<NewDelivery> {
  const fd = openSync(path, 'r');
  try {
    for (const entry of entries) {
      const bytes = Buffer.alloc(entry.length);
      readSync(fd, bytes, 0, entry.length, entry.offset);
      yield parseLine(bytes.toString('utf8').trim(), entry.line).delivery;
    }
  } finally {
    closeSync(fd);
  }
}

const VERIFICATION = new Set<VerificationStatus>(['verified', 'failed', 'none']);
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;
const ID = /^[A-Za-z0-9._~-]{1,200}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** One line as the delivery to store, with its seq in the exported inbox; CliError naming the line and the field. */
function parseLine(text: string, line: number): { seq: number; id: string; delivery: NewDelivery } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw lineError(line, 'it is not JSON (a file written by reception export --raw has one Delivery object per line)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw lineError(line, 'it is not a JSON object');
  const record = value as Record<string, unknown>;
  const field = <T>(name: string, check: (v: unknown) => v is T, expected: string): T => {
    const v = record[name];
    if (!check(v)) throw lineError(line, `"${name}" ${v === undefined ? 'is missing' : 'is not'} ${expected}`);
    return v;
  };
  const isString = (v: unknown): v is string => typeof v === 'string';
  if (record.raw === undefined) {
    throw lineError(line, 'it has no "raw" (the body bytes): write the file with reception export --raw');
  }
  const id = field('id', (v): v is string => isString(v) && ID.test(v), 'a delivery id');
  const seq = field('seq', (v): v is number => Number.isSafeInteger(v) && (v as number) > 0, 'a seq (a whole number above 0)');
  const source = field('source', isString, 'a source name');
  try {
    checkSourceName(source);
  } catch (error) {
    throw lineError(line, `"source" is not a valid source name (${(error as Error).message})`);
  }
  const receivedAtText = field('receivedAt', isString, 'a time');
  const receivedAt = Date.parse(receivedAtText);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(receivedAtText) || Number.isNaN(receivedAt)) {
    throw lineError(line, '"receivedAt" is not an RFC 3339 UTC time such as 2026-11-22T01:02:03.456Z');
  }
  const method = field('method', (v): v is string => isString(v) && METHOD.test(v), 'an HTTP method');
  const query = field('query', isString, 'a string');
  const contentType = field('contentType', isString, 'a string');
  const remoteAddress = field('remoteAddress', isString, 'a string');
  const headers = field(
    'headers',
    (v): v is Array<[string, string]> =>
      Array.isArray(v) && v.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every(isString)),
    'a list of [name, value] pairs',
  );
  const verification = field(
    'verification',
    (v): v is { status: VerificationStatus; scheme?: string; reason?: string } => {
      if (typeof v !== 'object' || v === null) return false;
      const { status, scheme, reason } = v as Record<string, unknown>;
      return (
        VERIFICATION.has(status as VerificationStatus) &&
        (scheme === undefined || isString(scheme)) &&
        (reason === undefined || isString(reason))
      );
    },
    'a verification ({ "status": "verified", "failed" or "none" })',
  );
  const rawText = field('raw', (v): v is string => isString(v) && v.length % 4 === 0 && BASE64.test(v), 'base64');
  const raw = Buffer.from(rawText, 'base64');
  const size = record.size;
  if (typeof size === 'number' && size !== raw.length) {
    throw lineError(line, `"raw" holds ${raw.length} bytes, but "size" says ${size}`);
  }
  const delivery: { seq: number; id: string; delivery: NewDelivery } = {
    seq,
    id,
    delivery: {
      id,
      source,
      receivedAt,
      method,
      query,
      contentType,
      remoteAddress,
      headers,
      raw,
      verification: {
        status: verification.status,
        ...(verification.scheme === undefined ? {} : { scheme: verification.scheme }),
        ...(verification.reason === undefined ? {} : { reason: verification.reason }),
      },
      // The dedup key is not in the export: a later repeat of an imported delivery is stored anew.
      dedupKey: null,
    },
  };
  delivery.delivery.eventType = importedEventType(record.eventType, delivery.delivery, line);
  return delivery;
}

/**
 * The event type an imported delivery keeps (CONTRACT 8): the one its line
 * carries (what the server that received it gave it, by its source's
 * settings too), else (a line written before types were exported) the one
 * the receiver would give it from its scheme, headers and body.
 */
function importedEventType(given: unknown, delivery: NewDelivery, line: number): string | null {
  if (given === null) return null;
  if (typeof given === 'string') return keptEventType(given);
  if (given !== undefined) throw lineError(line, '"eventType" is not a string or null');
  return eventTypeOf(storedEventTypeSubject(delivery));
}

function quote(text: string): string {
  return escapeForTerminal(JSON.stringify(text.slice(0, 100)));
}

function lineError(line: number, problem: string): CliError {
  return new CliError(`line ${line}: ${problem}; nothing was imported.`);
}
