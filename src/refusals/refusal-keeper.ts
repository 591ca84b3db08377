import { problemCatalogue, type ProblemCode } from '../platform/errors/problem-catalogue.js';
import { headerList } from '../platform/http/header-list.js';
import { REFUSAL_PREVIEW_BYTES, type NewRefusal } from './refusals.js';
import { newDeliveryId } from '../deliveries/delivery-id.js';

/** Where kept refusals go: the refusal writer's buffer (store/refusal-writer.ts), which never waits. */
export interface RefusalSink {
  /** Whether one more refusal would be taken now (a flood fills the buffer between writes). */
  hasRoom(): boolean;
  record(refusal: NewRefusal): void;
  /** Counts a refusal that was not even built, the sink having no room for it (its source's traffic counts it still). */
  drop(source: string | null, at: number): void;
}

/** What is known of a refused request to the webhook route, by the receiver or by the front door. */
export interface RefusalFacts {
  /** When its handling began (ms). */
  receivedAt: number;
  /** The decoded source name; null when the name was not valid. */
  source: string | null;
  method: string;
  /** What the sender was answered. */
  code: ProblemCode;
  detail: string;
  /** Node's `rawHeaders`: names and values in arrival order; empty when the parser stopped before them. */
  rawHeaders: readonly string[];
  /** The body's size as far as known: its length when read, else its Content-Length, else 0. */
  size: number;
  /** What of the body is known: the body, or chunks of its start; only the first 4 KiB are kept. */
  body: readonly Buffer[];
  /**
   * The body was not read before the answer: its start is taken from what
   * arrives after it, as the connection discards the rest (receive/edge).
   */
  bodyUnread: boolean;
}

/**
 * Turns what is known of a refused request into a refusal (CONTRACT 9) and
 * hands it to the sink: headers redacted as a delivery's, the body's first
 * 4 KiB copied out of the request's buffers (a preview must not hold on to
 * a 5 MiB body), none of it when the request was refused for its size.
 */
export class RefusalKeeper {
  constructor(
    private readonly sink: RefusalSink,
    private readonly redactHeaders: ReadonlySet<string>,
  ) {}

  /** Whether a refusal would be taken now: when not, its body need not be read for a preview. */
  hasRoom(): boolean {
    return this.sink.hasRoom();
  }

  keep(facts: RefusalFacts): void {
    // In a flood, most refusals find the buffer full: they are counted, and cost no more.
    if (!this.sink.hasRoom()) {
      this.sink.drop(facts.source, facts.receivedAt);
      return;
    }
    const { rawHeaders } = facts;
    this.sink.record({
      id: newDeliveryId(facts.receivedAt),
      source: facts.source,
      receivedAt: facts.receivedAt,
      method: facts.method,
      status: problemCatalogue[facts.code].status,
      code: facts.code,
      detail: facts.detail,
      contentType: firstHeader(rawHeaders, 'content-type') ?? '',
      size: facts.size,
      headers: headerList(rawHeaders, this.redactHeaders),
      preview: facts.code === 'payload_too_large' ? Buffer.alloc(0) : startOf(facts.body),
    });
  }
}

/** A copy of the first REFUSAL_PREVIEW_BYTES of `chunks`. */
export function startOf(chunks: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  let length = 0;
  for (const chunk of chunks) {
    if (length >= REFUSAL_PREVIEW_BYTES) break;
    const part = chunk.subarray(0, REFUSAL_PREVIEW_BYTES - length);
    parts.push(part);
    length += part.length;
  }
  // Buffer.concat copies, even of a single part.
  return Buffer.concat(parts, length);
}

/** The first value of a header in `rawHeaders` (as Node keeps Content-Type: the first one). */
function firstHeader(rawHeaders: readonly string[], lowerName: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === lowerName) return rawHeaders[i + 1];
  }
  return undefined;
}
