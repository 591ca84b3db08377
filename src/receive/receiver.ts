import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ProblemError, problemFor, type ProblemCode } from '../errors.js';
import { StoreUnavailableError, type NewDelivery } from '../store/inbox-store.js';
import type { WriteQueue } from '../store/write-queue.js';
import { headerList } from './headers.js';
import { classifyMediaType } from './media-type.js';
import { parseFormBody } from './parse-form.js';
import { parseJsonBody } from './parse-json.js';
import { BodyAbortedError } from './read-body.js';
import { clientAddress, type TrustedProxies } from './remote-address.js';
import { decodeSourceName } from './source-name.js';

/** A request to `/api/webhook/{source}`, as any HTTP adapter hands it over. */
export interface InboundRequest {
  method: string;
  /** The `{source}` path segment, still percent-encoded. */
  sourceSegment: string;
  /** The query string without `?`. */
  query: string;
  /** Header names in lower case (Node's `req.headers`). */
  headers: IncomingHttpHeaders;
  /** Header names and values in arrival order (Node's `req.rawHeaders`). */
  rawHeaders: readonly string[];
  socketAddress: string | undefined;
  /** Reads the whole body, refusing with `payload_too_large` past `limit` bytes. */
  readBody(limit: number): Promise<Buffer>;
}

/** What the adapter writes back. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** For logs and metrics: `stored`, `duplicate` or the problem code. */
  outcome: string;
  source?: string;
  id?: string;
  /** The body was not read to its end: the connection must not be reused. */
  closeConnection?: boolean;
  /** The sender went away; there is nobody to answer. */
  aborted?: boolean;
  /** An unexpected failure behind a 5xx answer, for the log only. */
  error?: unknown;
}

/** What a source may change about receiving (the config file adds to it). */
export interface SourcePolicy {
  maxBodyBytes: number;
  /** Accept any JSON value at the top level, not only objects. */
  anyJson: boolean;
}

export interface ReceiverOptions {
  queue: WriteQueue;
  trustedProxies: TrustedProxies;
  redactHeaders: ReadonlySet<string>;
  defaultPolicy: SourcePolicy;
  /** Seconds a refused sender is told to wait (`Retry-After`). */
  retryAfterSeconds?: number;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;
const PROBLEM_HEADERS = { 'content-type': 'application/problem+json; charset=utf-8' } as const;

/**
 * Decides what happens to one webhook request: checks the source name, the
 * method, the media type and the size, parses the body, and hands the
 * delivery to the write queue. It answers 200 only after the commit.
 * No HTTP framework is involved: adapters move bytes in and out.
 */
export class Receiver {
  constructor(private readonly options: ReceiverOptions) {}

  async handle(request: InboundRequest): Promise<Answer> {
    let source: string | undefined;
    let bodyRead = false;
    try {
      source = decodeSourceName(request.sourceSegment);
      const policy = this.options.defaultPolicy;
      if (request.method !== 'POST') {
        throw new ProblemError('method_not_allowed', `Use POST to send a webhook, not ${request.method}.`, { allow: 'POST' });
      }
      const contentType = request.headers['content-type'];
      const kind = classifyMediaType(contentType);
      const declaredLength = parseContentLength(request.headers['content-length']);
      if (declaredLength !== undefined && declaredLength > policy.maxBodyBytes) {
        throw new ProblemError('payload_too_large', `The body is larger than ${policy.maxBodyBytes} bytes.`);
      }
      if (kind === undefined && declaredLength !== undefined && declaredLength > 0) {
        throw unsupported(contentType);
      }
      const raw = await request.readBody(policy.maxBodyBytes);
      bodyRead = true;
      if (raw.length === 0) throw new ProblemError('empty_body', 'The request has no body.');
      if (kind === undefined) throw unsupported(contentType);
      if (kind === 'json') parseJsonBody(raw, policy.anyJson);
      else parseFormBody(raw);

      const delivery: NewDelivery = {
        id: randomUUID(),
        source,
        receivedAt: Date.now(),
        method: request.method,
        query: request.query,
        contentType: contentType ?? '',
        remoteAddress: clientAddress(request.socketAddress, request.headers['x-forwarded-for'], this.options.trustedProxies),
        headers: headerList(request.rawHeaders, this.options.redactHeaders),
        raw,
        verification: { status: 'none' },
        dedupKey: null,
      };
      const outcome = await this.options.queue.enqueue(delivery);
      const receivedAt = new Date(outcome.receivedAt).toISOString();
      const body = outcome.duplicate
        ? JSON.stringify({ id: outcome.id, source, receivedAt, duplicate: true })
        : JSON.stringify({ id: outcome.id, source, receivedAt });
      return {
        status: 200,
        headers: { ...JSON_HEADERS },
        body,
        outcome: outcome.duplicate ? 'duplicate' : 'stored',
        source,
        id: outcome.id,
      };
    } catch (error) {
      if (error instanceof BodyAbortedError) {
        return { ...this.problem('request_timeout', error.message), aborted: true, ...(source === undefined ? {} : { source }) };
      }
      const answer = this.answerFor(error);
      if (source !== undefined) answer.source = source;
      if (!bodyRead) answer.closeConnection = true;
      return answer;
    }
  }

  private answerFor(error: unknown): Answer {
    if (error instanceof ProblemError) {
      const answer = this.problem(error.code, error.message);
      Object.assign(answer.headers, error.headers);
      return answer;
    }
    if (error instanceof StoreUnavailableError) {
      const answer = this.problem('storage_unavailable', 'The inbox cannot take this delivery right now; retry later.');
      answer.headers['retry-after'] = String(this.options.retryAfterSeconds ?? 5);
      answer.error = error;
      return answer;
    }
    const answer = this.problem('internal_error', 'The delivery could not be received; retry later.');
    answer.headers['retry-after'] = String(this.options.retryAfterSeconds ?? 5);
    answer.error = error;
    return answer;
  }

  private problem(code: ProblemCode, detail: string): Answer {
    const problem = problemFor(code, detail);
    return { status: problem.status, headers: { ...PROBLEM_HEADERS }, body: JSON.stringify(problem), outcome: code };
  }
}

function unsupported(contentType: string | undefined): ProblemError {
  const detail = contentType === undefined
    ? 'The request has no Content-Type; send application/json or application/x-www-form-urlencoded.'
    : 'Send application/json, application/*+json or application/x-www-form-urlencoded.';
  return new ProblemError('unsupported_media_type', detail);
}

function parseContentLength(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Number(header);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
