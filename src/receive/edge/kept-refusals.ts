import type { IncomingMessage } from 'node:http';
import type { ProblemCode } from '../../platform/errors/problem-catalogue.js';
import { parseContentLength } from '../../body/body-headers.js';
import { decodeSourceName } from '../../platform/http/source-name.js';
import type { RefusalFacts, RefusalKeeper } from '../../refusals/refusal-keeper.js';
import { REFUSAL_PREVIEW_BYTES } from '../../refusals/refusals.js';
import { originForm } from './request-target.js';

/**
 * Refusals of the webhook route that the front door makes itself, before
 * the receiver sees the request (CONTRACT 9 keeps every refusal of the
 * route, whoever makes it), and the body's start for a refusal given
 * before the body was read.
 *
 * What is kept of what: a request that HTTP itself rules out (several Host
 * headers, an `Expect` other than 100-continue, `CONNECT`) is kept with its
 * headers; one that Node's parser refused is kept when the bytes refused
 * begin with a request line for the webhook route, with its method and
 * source but no headers (the parser stopped before they were whole). Bytes
 * that never made a request line for the route (a port scanner, TLS spoken
 * to plain http, headers that never finished before the request timeout)
 * are not refusals of the route: they are logged and counted, not kept, and
 * so cannot fill the refusals with noise that names no route at all.
 */

const WEBHOOK_PREFIX = '/api/webhook/';

/** The decoded source of a webhook path (`/api/webhook/x?y`), null when the name is not valid; undefined when it is not the webhook route. */
function sourceOfPath(url: string): string | null | undefined {
  const target = originForm(url);
  if (!target.startsWith(WEBHOOK_PREFIX)) return undefined;
  const queryAt = target.indexOf('?');
  const segment = target.slice(WEBHOOK_PREFIX.length, queryAt === -1 ? undefined : queryAt);
  if (segment.includes('/')) return undefined;
  try {
    return decodeSourceName(segment);
  } catch {
    return null;
  }
}

/**
 * Keeps the front door's refusal of a request to the webhook route (with its
 * headers); others are not kept. With `readsBody`, call it before the body is
 * resumed: its start is noted as it is thrown away, and the refusal kept once
 * it ended.
 */
export function keepFrontDoorRefusal(
  keeper: RefusalKeeper | undefined,
  req: IncomingMessage,
  code: ProblemCode,
  detail: string,
  readsBody: boolean,
): void {
  if (keeper === undefined) return;
  const source = sourceOfPath(req.url ?? '');
  if (source === undefined) return;
  let body: BodyStart | undefined;
  if (readsBody && !req.readableEnded) {
    body = new BodyStart();
    req.on('data', body.take);
    req.once('end', body.end);
    req.once('close', body.end);
  }
  const facts: RefusalFacts = {
    receivedAt: Date.now(),
    source,
    method: req.method ?? 'GET',
    code,
    detail,
    rawHeaders: req.rawHeaders,
    size: parseContentLength(req.headers['content-length']) ?? 0,
    body: [],
    bodyUnread: true,
  };
  if (body === undefined) keeper.keep(facts);
  else body.then((start, bytes) => keeper.keep({ ...facts, body: [start], size: facts.size || bytes }));
}

/** A request line for the webhook route at the start of what the parser refused: its method and target. */
const WEBHOOK_REQUEST_LINE = /^([!#$%&'*+.^`|~\w-]{1,32}) (\/api\/webhook\/[^ \r\n]*)/;

/** Keeps a parser refusal whose bytes begin with a request line for the webhook route; anything else is not kept. */
export function keepParserRefusal(keeper: RefusalKeeper | undefined, packet: unknown, code: ProblemCode, detail: string): void {
  if (keeper === undefined || !(packet instanceof Buffer)) return;
  const match = WEBHOOK_REQUEST_LINE.exec(packet.toString('latin1', 0, Math.min(packet.length, 16 * 1024)));
  if (match === null) return;
  const [, method = '', target = ''] = match;
  // A raw byte the parser refused in the path is a name that is not valid as sent.
  const source = code === 'invalid_source' || /[^\x21-\x7e]/.test(target) ? null : sourceOfPath(target);
  if (source === undefined) return;
  keeper.keep({ receivedAt: Date.now(), source, method, code, detail, rawHeaders: [], size: 0, body: [], bodyUnread: false });
}

/**
 * The start of a body that arrives after its request was answered (and is
 * read only to be thrown away): its first REFUSAL_PREVIEW_BYTES and how
 * many bytes came, told once, when the body ends or stops arriving.
 */
export class BodyStart {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private bytes = 0;
  private told = false;
  private listener: ((start: Buffer, bytes: number) => void) | undefined;
  private ended = false;

  /** Note a chunk of the body. */
  readonly take = (chunk: Buffer): void => {
    this.bytes += chunk.length;
    if (this.kept >= REFUSAL_PREVIEW_BYTES) return;
    const part = chunk.subarray(0, REFUSAL_PREVIEW_BYTES - this.kept);
    // Copied: the preview must not hold on to the socket's buffers.
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  };

  /** The body ended, or no more of it will be read. */
  readonly end = (): void => {
    this.ended = true;
    this.tell();
  };

  /** Calls `listener` once the body ended (at once if it has). */
  then(listener: (start: Buffer, bytes: number) => void): void {
    this.listener = listener;
    this.tell();
  }

  private tell(): void {
    if (this.told || !this.ended || this.listener === undefined) return;
    this.told = true;
    this.listener(Buffer.concat(this.chunks, this.kept), this.bytes);
  }
}
