import type { IncomingHttpHeaders } from 'node:http';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemFor, type ProblemCode } from '../errors.js';
import { StoreUnavailableError, type NewDelivery, type Verification } from '../store/inbox-store.js';
import type { WriteQueue } from '../store/write-queue.js';
import { newDeliveryId } from './delivery-id.js';
import { bodyHandshake, queryHandshake, type HandshakeReply } from './handshake.js';
import { headerList } from './headers.js';
import { classifyMediaType, hasConflictingContentTypes } from './media-type.js';
import { checkFormFields, parseFormBody, type FormBody } from './parse-form.js';
import { checkJsonBody, jsonBodyValue } from './parse-json.js';
import { BodyBudgetSpentError } from './body-budget.js';
import { BodyAbortedError } from './read-body.js';
import { clientAddress, type TrustedProxies } from './remote-address.js';
import { decodeSourceName } from './source-name.js';
import { FAILURE_TEXT, type VerifyFailure } from '../verify/verifier.js';
import type { SourceRule, SourceRules } from './source-rules.js';
import { destinationsFor, filterHeaders, filterQuery } from '../forward/routes.js';
import type { NewForward } from '../store/outbox.js';
import { eventTypeOf } from './event-type.js';

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
  /** The body was not read to its end: the rest is discarded (within bounds) after the answer. */
  closeConnection?: boolean;
  /** The sender went away; there is nobody to answer. */
  aborted?: boolean;
  /** An unexpected failure behind a 5xx answer, for the log only. */
  error?: unknown;
  /** The signature check's outcome, for logs and metrics. */
  verification?: Verification;
}

export interface ReceiverOptions {
  queue: WriteQueue;
  trustedProxies: TrustedProxies;
  redactHeaders: ReadonlySet<string>;
  /** The rules in force; read per request so that a reload takes effect at once. */
  rules: () => SourceRules;
  /** Seconds a refused sender is told to wait (`Retry-After`). */
  retryAfterSeconds?: number;
}

/**
 * The largest JSON body read as a possible handshake (Slack's and Zoom's are
 * a few hundred bytes): on a handshake source that does not verify, anyone
 * may send, and a larger body is only checked, never parsed.
 */
const MAX_HANDSHAKE_BYTES = 64 * 1024;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;
const PROBLEM_HEADERS = { 'content-type': PROBLEM_CONTENT_TYPE } as const;

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
    let verification: Verification = { status: 'none' };
    try {
      source = decodeSourceName(request.sourceSegment);
      const rule = this.options.rules().forSource(source);
      if (rule === undefined) {
        throw new ProblemError('unknown_source', 'This server only accepts the sources named in its config file.');
      }
      const handshake = queryHandshake(rule, request.method, request.query);
      if (handshake !== undefined) return this.handshakeAnswer(handshake, source);
      if (request.method !== 'POST') {
        // Meta's and X's handshakes come as GET: those sources take GET, for the handshake only.
        const getHandshake = rule.handshake?.type === 'meta' || rule.handshake?.type === 'x';
        throw new ProblemError('method_not_allowed', `Use POST to send a webhook, not ${request.method}${getHandshake ? ' (GET is for the handshake only)' : ''}.`,
          { allow: getHandshake ? 'GET, POST' : 'POST' });
      }
      const waitSeconds = rule.rateLimiter?.take() ?? 0;
      if (waitSeconds > 0) {
        throw new ProblemError('rate_limited', `This source takes no more deliveries right now; retry in ${waitSeconds} s.`, { 'retry-after': String(waitSeconds) });
      }
      const { policy } = rule;
      const contentType = request.headers['content-type'];
      const conflicting = hasConflictingContentTypes(request.rawHeaders);
      const kind = conflicting ? undefined : classifyMediaType(contentType);
      const declaredLength = parseContentLength(request.headers['content-length']);
      if (declaredLength !== undefined && declaredLength > policy.maxBodyBytes) {
        throw new ProblemError('payload_too_large', `The body is larger than ${policy.maxBodyBytes} bytes.`);
      }
      // Refusals that need no body are given before it is read when one is announced.
      const announcesBody = (declaredLength ?? 0) > 0;
      if (kind === undefined && announcesBody) throw unsupported(contentType, conflicting);
      const coding = contentCoding(request.headers['content-encoding']);
      if (coding !== undefined && announcesBody) throw compressed(coding);
      const raw = await request.readBody(policy.maxBodyBytes);
      bodyRead = true;
      if (raw.length === 0) throw new ProblemError('empty_body', 'The request has no body.');
      if (kind === undefined) throw unsupported(contentType, conflicting);
      if (coding !== undefined) throw compressed(coding);
      let form: FormBody | undefined;
      if (kind === 'form') {
        checkFormFields(raw);
        form = parseFormBody(raw);
      } else {
        checkJsonBody(raw, policy.anyJson);
      }

      let deliveryId: string | undefined;
      let secretIndex = 0;
      if (rule.verifier !== undefined) {
        const result = rule.verifier.verify({
          raw, headers: request.headers, query: request.query, contentType: contentType ?? '', nowMs: Date.now(),
        });
        if (result.ok) {
          verification = { status: 'verified', scheme: rule.verifier.scheme };
          deliveryId = result.deliveryId;
          secretIndex = result.secretIndex;
        } else {
          verification = { status: 'failed', scheme: rule.verifier.scheme, reason: result.reason };
        }
      }
      if (verification.status !== 'failed') {
        const reply = bodyHandshake(rule, () => form ?? (raw.length <= MAX_HANDSHAKE_BYTES ? jsonBodyValue(raw) : undefined), secretIndex);
        if (reply !== undefined) return this.handshakeAnswer(reply, source, verification);
      }
      if (verification.status === 'failed' && rule.onFailure === 'reject') {
        throw new ProblemError('signature_invalid', signatureDetail(verification));
      }

      const dedupKey = verification.status === 'failed' ? null : dedupHeaderValue(request.headers, rule.dedupHeader) ?? deliveryId ?? null;
      const delivery: NewDelivery = {
        id: newDeliveryId(),
        source,
        receivedAt: Date.now(),
        method: request.method,
        query: request.query,
        contentType: contentType ?? '',
        remoteAddress: clientAddress(request.socketAddress, request.headers['x-forwarded-for'], this.options.trustedProxies),
        headers: headerList(request.rawHeaders, this.options.redactHeaders),
        raw,
        verification,
        dedupKey,
      };
      if (verification.status !== 'failed' && rule.routes.length > 0) {
        delivery.forwards = this.forwardsOf(rule, request, raw, form, verification);
      }
      const outcome = await this.options.queue.enqueue(delivery);
      if (verification.status === 'failed') {
        const answer = this.problem('signature_invalid', `${signatureDetail(verification)} The delivery was kept, as failed.`);
        return { ...answer, source, id: outcome.id, verification };
      }
      const receivedAt = new Date(outcome.receivedAt).toISOString();
      const answerBody = outcome.duplicate
        ? JSON.stringify({ id: outcome.id, source, receivedAt, duplicate: true })
        : JSON.stringify({ id: outcome.id, source, receivedAt });
      return {
        status: 200,
        headers: { ...JSON_HEADERS },
        body: answerBody,
        outcome: outcome.duplicate ? 'duplicate' : 'stored',
        source,
        id: outcome.id,
        verification,
      };
    } catch (error) {
      if (error instanceof BodyAbortedError) {
        return { ...this.problem('request_timeout', error.message), aborted: true, ...(source === undefined ? {} : { source }) };
      }
      const answer = this.answerFor(error);
      if (source !== undefined) answer.source = source;
      if (verification.status !== 'none') answer.verification = verification;
      if (!bodyRead) answer.closeConnection = true;
      return answer;
    }
  }

  /** The forwards a delivery gets: one per destination whose route matches (CONTRACT 6). */
  private forwardsOf(rule: SourceRule, request: InboundRequest, raw: Buffer, form: FormBody | undefined, verification: Verification): NewForward[] {
    const destinations = destinationsFor(rule.routes, () => {
      const body = form ?? jsonBodyValue(raw);
      return {
        body,
        headers: filterHeaders(request.headers, this.options.redactHeaders),
        query: filterQuery(request.query),
        eventType: eventTypeOf(verification.scheme, request.headers, body),
      };
    });
    return destinations.map((destination) => ({ id: newDeliveryId(), destination }));
  }

  private handshakeAnswer(reply: HandshakeReply, source: string, verification?: Verification): Answer {
    if (reply.refused !== undefined) return { ...this.problem('handshake_failed', reply.refused), source };
    return {
      status: reply.status,
      // The answer echoes the sender's text, on the web page's origin: never to be sniffed as HTML.
      headers: { 'content-type': reply.contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
      body: reply.body,
      outcome: 'handshake',
      source,
      ...(verification === undefined ? {} : { verification }),
    };
  }

  private answerFor(error: unknown): Answer {
    if (error instanceof ProblemError) {
      const answer = this.problem(error.code, error.message);
      Object.assign(answer.headers, error.headers);
      return answer;
    }
    if (error instanceof BodyBudgetSpentError) {
      // Load shed on purpose: the answer and its log line say so, not as a failure.
      return this.retryLater('storage_unavailable', 'This server is taking in as many bodies as it holds at once; retry later.');
    }
    if (error instanceof StoreUnavailableError) {
      return this.retryLater('storage_unavailable', 'The inbox cannot take this delivery right now; retry later.', error);
    }
    return this.retryLater('internal_error', 'The delivery could not be received; retry later.', error);
  }

  /** A refusal that the sender should retry: with `Retry-After`, and the error to log when it is a failure. */
  private retryLater(code: ProblemCode, detail: string, error?: unknown): Answer {
    const answer = this.problem(code, detail);
    answer.headers['retry-after'] = String(this.options.retryAfterSeconds ?? 5);
    if (error !== undefined) answer.error = error;
    return answer;
  }

  private problem(code: ProblemCode, detail: string): Answer {
    const problem = problemFor(code, detail);
    return { status: problem.status, headers: { ...PROBLEM_HEADERS }, body: JSON.stringify(problem), outcome: code };
  }
}

/** The answer's detail for a failed check: the scheme and what failed. */
function signatureDetail(verification: Verification): string {
  const { reason } = verification;
  const text = reason !== undefined && Object.hasOwn(FAILURE_TEXT, reason) ? FAILURE_TEXT[reason as VerifyFailure] : 'the signature does not match';
  return `The ${verification.scheme ?? ''} signature check failed: ${text}.`;
}

function compressed(coding: string): ProblemError {
  return new ProblemError('unsupported_media_type', `Content-Encoding "${coding}" is not accepted here: send the body uncompressed.`);
}

function unsupported(contentType: string | undefined, conflicting: boolean): ProblemError {
  if (conflicting) {
    return new ProblemError('unsupported_media_type', 'The request has several Content-Type headers that disagree; send one.');
  }
  const detail = contentType === undefined
    ? 'The request has no Content-Type; send application/json or application/x-www-form-urlencoded.'
    : 'Send application/json, application/*+json or application/x-www-form-urlencoded.';
  return new ProblemError('unsupported_media_type', detail);
}

/**
 * A content coding other than `identity` (gzip, br...), as RFC 9110 8.4.1
 * allows a server to refuse with 415: the body would be stored compressed
 * and parsed as garbage. Cut to 40 characters for the answer.
 */
function contentCoding(header: string | undefined): string | undefined {
  const coding = header?.trim().toLowerCase();
  return coding === undefined || coding === '' || coding === 'identity' ? undefined : coding.slice(0, 40);
}

/**
 * The configured dedup header's value; undefined when it is absent or blank,
 * which is no key at all (else every delivery with an empty header would be
 * a duplicate of the first).
 */
function dedupHeaderValue(headers: IncomingHttpHeaders, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const value = headers[name];
  const first = (Array.isArray(value) ? value[0] : value)?.trim();
  return first === undefined || first === '' ? undefined : first;
}

/** The declared body size; one past 2^53 (or too long to read as a number at all) is larger than any limit, not unknown. */
function parseContentLength(header: string | undefined): number | undefined {
  const digits = header?.trim();
  return digits !== undefined && /^\d+$/.test(digits) ? Number(digits) : undefined;
}
