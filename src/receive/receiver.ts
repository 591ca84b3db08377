import type { IncomingHttpHeaders } from 'node:http';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { AppendOutcome, NewDelivery, Verification } from '../deliveries/delivery-store.js';
import type { WriteQueue } from '../inbox/write-queue.js';
import { newDeliveryId } from '../deliveries/delivery-id.js';
import { bodyHandshake, queryHandshake, type HandshakeReply } from './handshake.js';
import { compressed, contentCoding, parseContentLength, unsupported } from '../body/body-headers.js';
import { headerList } from '../platform/http/header-list.js';
import { bodyKindFor, hasConflictingContentTypes, type BodyKind } from '../body/media-type.js';
import { parseReceivedBody, type ReceivedBody } from '../body/parse-body.js';
import { BodyBudgetSpentError } from '../body/body-budget.js';
import { BodyAbortedError, BodyTooLargeError } from '../body/read-body.js';
import { clientAddress, type TrustedProxies } from '../platform/http/remote-address.js';
import { decodeSourceName } from '../platform/http/source-name.js';
import { ISSUES_SOURCE } from '../alerts/issue-event.js';
import { failureSentence } from '../verify/failure-text.js';
import type { SourceRule, SourceRules } from './source-rules.js';
import { destinationsFor, filterHeaders, filterQuery } from '../forwarding/routes.js';
import type { NewForward } from '../deliveries/delivery-store.js';
import { eventTypeOf } from '../event-types/event-type.js';
import { receivedBodyFields } from '../event-types/event-type-of-delivery.js';
import { renderAnswer } from './custom-answer.js';
import { answerForError, isRefusal, problemAnswer, type Answer } from './answer.js';

export type { Answer } from './answer.js';

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

export interface ReceiverOptions {
  queue: WriteQueue;
  trustedProxies: TrustedProxies;
  redactHeaders: ReadonlySet<string>;
  /** The rules in force; read per request so that a reload takes effect at once. */
  rules: () => SourceRules;
  /** Seconds a refused sender is told to wait (`Retry-After`). */
  retryAfterSeconds?: number;
  /** Told of each failed signature check (refused or kept): the source, and the sentence its sender is answered with. */
  onVerificationFailed?: (source: string, failure: string) => void;
}

/**
 * The largest JSON body read as a possible handshake (Slack's and Zoom's are
 * a few hundred bytes): on a handshake source that does not verify, anyone
 * may send, and a larger body is only checked, never parsed.
 */
const MAX_HANDSHAKE_BYTES = 64 * 1024;

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The last receipt time written as ISO 8601: the deliveries of one commit share their millisecond. */
let lastIso = { ms: Number.NaN, text: '' };

/** `new Date(ms).toISOString()`, made once per millisecond. */
function isoTime(ms: number): string {
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString() };
  return lastIso.text;
}

/** What admission learnt from the request line and headers, for the steps after it. */
interface Admitted {
  source: string;
  rule: SourceRule;
  /** The Content-Type header as sent. */
  contentType: string | undefined;
  /** Several Content-Type headers that disagree. */
  conflicting: boolean;
  /** How the body is parsed; undefined for a media type the source does not take. */
  kind: BodyKind | 'any' | undefined;
  /** A content coding other than identity, refused. */
  coding: string | undefined;
}

/** The signature check's outcome. */
interface Checked {
  verification: Verification;
  /** The delivery id that the scheme signs, a dedup key when no dedup header is configured. */
  deliveryId: string | undefined;
  /** Which of the source's secrets matched (a handshake answers with the same one). */
  secretIndex: number;
}

/** What is known of a request when a step fails: said in the answer (source, verification) and how the connection ends. */
interface Known {
  source?: string;
  bodyRead: boolean;
  verification?: Verification;
}

/** What became known of the body, for a refusal's preview and size. */
interface BodySeen {
  /** The Content-Length, when one was sent. */
  declared?: number;
  /** The body, read whole. */
  raw?: Buffer;
  /** Bytes that had arrived when reading stopped (too large, or cut), and the chunks when cut. */
  received?: number;
  chunks?: readonly Buffer[];
}

/** A step's answer that ends the request there: a refusal or a handshake. */
class Finished {
  constructor(readonly answer: Answer) {}
}

/**
 * Decides what happens to one webhook request, in four steps: admit (the
 * source name, the method, the rate limit, what the headers refuse), read
 * (the body, within its size, parsed as its media type), verify (the
 * signature and a handshake) and keep (hand the delivery to the write
 * queue; answer 200 only after the commit). Each step returns what the next
 * one needs, or the answer that ends the request there.
 * No HTTP framework is involved: adapters move bytes in and out.
 */
export class Receiver {
  constructor(private readonly options: ReceiverOptions) {}

  async handle(request: InboundRequest): Promise<Answer> {
    const receivedAt = Date.now();
    const seen: BodySeen = {};
    const answer = await this.decide(request, seen);
    if (isRefusal(answer) && answer.problem !== undefined) {
      const { code, detail } = answer.problem;
      answer.refused = {
        receivedAt,
        source: answer.source ?? null,
        method: request.method,
        code,
        detail,
        rawHeaders: request.rawHeaders,
        size: seen.raw?.length ?? seen.declared ?? seen.received ?? 0,
        body: seen.raw !== undefined ? [seen.raw] : (seen.chunks ?? []),
        // Refused for its size: nothing of it is shown, so nothing of it is read for that.
        bodyUnread: code !== 'payload_too_large' && seen.raw === undefined && seen.received === undefined,
      };
    }
    return answer;
  }

  private async decide(request: InboundRequest, seen: BodySeen): Promise<Answer> {
    const admitted = this.admit(request, seen);
    if (admitted instanceof Finished) return admitted.answer;
    const body = await this.read(request, admitted, seen);
    if (body instanceof Finished) return body.answer;
    const checked = this.verify(request, admitted, body);
    if (checked instanceof Finished) return checked.answer;
    return await this.keep(request, admitted, body, checked);
  }

  /** Admit: everything decided before the body is read. A handshake on the query is answered here. */
  private admit(request: InboundRequest, seen: BodySeen): Admitted | Finished {
    const source = this.step({ bodyRead: false }, () => notReserved(decodeSourceName(request.sourceSegment)));
    if (source instanceof Finished) return source;
    return this.step({ source, bodyRead: false }, () => {
      const rule = this.options.rules().forSource(source);
      if (rule === undefined) {
        throw new ProblemError('unknown_source', 'This server only accepts the sources named in its config file.');
      }
      const handshake = queryHandshake(rule, request.method, request.query);
      if (handshake !== undefined) return new Finished(this.handshakeAnswer(handshake, source));
      if (request.method !== 'POST') {
        // Meta's and X's handshakes come as GET: those sources take GET, for the handshake only.
        const getHandshake = rule.handshake?.type === 'meta' || rule.handshake?.type === 'x';
        throw new ProblemError(
          'method_not_allowed',
          `Use POST to send a webhook, not ${request.method}${getHandshake ? ' (GET is for the handshake only)' : ''}.`,
          { allow: getHandshake ? 'GET, POST' : 'POST' },
        );
      }
      const waitSeconds = rule.rateLimiter?.take() ?? 0;
      if (waitSeconds > 0) {
        throw new ProblemError('rate_limited', `This source takes no more deliveries right now; retry in ${waitSeconds} s.`, {
          'retry-after': String(waitSeconds),
        });
      }
      const { maxBodyBytes } = rule.policy;
      const contentType = request.headers['content-type'];
      const conflicting = hasConflictingContentTypes(request.rawHeaders);
      const kind = conflicting ? undefined : bodyKindFor(contentType, rule.accept);
      const declaredLength = parseContentLength(request.headers['content-length']);
      if (declaredLength !== undefined) seen.declared = declaredLength;
      if (declaredLength !== undefined && declaredLength > maxBodyBytes) {
        throw new ProblemError('payload_too_large', `The body is larger than ${maxBodyBytes} bytes.`);
      }
      // Refusals that need no body are given before it is read when one is announced.
      const announcesBody = (declaredLength ?? 0) > 0;
      if (kind === undefined && announcesBody) throw unsupported(contentType, conflicting, rule.accept);
      const coding = contentCoding(request.headers['content-encoding']);
      if (coding !== undefined && announcesBody) throw compressed(coding);
      return { source, rule, contentType, conflicting, kind, coding };
    });
  }

  /** Read: the whole body within the source's limit, then the refusals that needed it, then its syntax. */
  private async read(request: InboundRequest, admitted: Admitted, seen: BodySeen): Promise<ReceivedBody | Finished> {
    const { source, rule, contentType, conflicting, kind, coding } = admitted;
    const raw = await this.stepAsync({ source, bodyRead: false }, () =>
      request.readBody(rule.policy.maxBodyBytes).catch((error: unknown) => {
        if (error instanceof BodyTooLargeError) seen.received = error.received;
        if (error instanceof BodyAbortedError) {
          seen.received = error.size;
          seen.chunks = error.received;
        }
        if (error instanceof BodyBudgetSpentError) {
          seen.chunks = error.received;
          seen.received = error.received.reduce((bytes, chunk) => bytes + chunk.length, 0);
        }
        throw error;
      }),
    );
    if (raw instanceof Finished) return raw;
    seen.raw = raw;
    const known: Known = { source, bodyRead: true };
    const parsed = this.step(known, () => {
      if (raw.length === 0) throw new ProblemError('empty_body', 'The request has no body.');
      if (kind === undefined) throw unsupported(contentType, conflicting, rule.accept);
      if (coding !== undefined) throw compressed(coding);
      return parseReceivedBody(kind, raw, contentType ?? '', rule.policy);
    });
    // Only a multipart body is parsed asynchronously.
    return parsed instanceof Promise ? this.stepAsync(known, () => parsed) : parsed;
  }

  /**
   * Verify: the source's signature check, then a handshake in the body
   * (never on a failed check), then the source's `onFailure`: a failed
   * check is refused, or kept as failed.
   */
  private verify(request: InboundRequest, admitted: Admitted, body: ReceivedBody): Checked | Finished {
    const { source, rule, contentType } = admitted;
    const checked = this.step({ source, bodyRead: true }, (): Checked => {
      if (rule.verifier === undefined) return { verification: { status: 'none' }, deliveryId: undefined, secretIndex: 0 };
      const result = rule.verifier.verify({
        raw: body.raw,
        headers: request.headers,
        query: request.query,
        contentType: contentType ?? '',
        nowMs: Date.now(),
      });
      return result.ok
        ? {
            verification: { status: 'verified', scheme: rule.verifier.scheme },
            deliveryId: result.deliveryId,
            secretIndex: result.secretIndex,
          }
        : {
            verification: { status: 'failed', scheme: rule.verifier.scheme, reason: result.reason },
            deliveryId: undefined,
            secretIndex: 0,
          };
    });
    if (checked instanceof Finished) return checked;
    const { verification } = checked;
    if (verification.status === 'failed') this.options.onVerificationFailed?.(source, signatureDetail(verification));
    return this.step({ source, bodyRead: true, verification }, () => {
      if (verification.status === 'failed') {
        if (rule.onFailure === 'reject') throw new ProblemError('signature_invalid', signatureDetail(verification));
        return checked;
      }
      const reply = bodyHandshake(
        rule,
        () =>
          body.kind === 'form' || (body.kind === 'json' && body.raw.length <= MAX_HANDSHAKE_BYTES) ? body.value() : undefined,
        checked.secretIndex,
      );
      return reply === undefined ? checked : new Finished(this.handshakeAnswer(reply, source, verification));
    });
  }

  /**
   * Keep: the delivery and its forwards go to the write queue; the answer
   * waits for the commit. The delivery is made at once, and the answer in
   * the commit's callback: no async function between the request and the
   * write queue (this is every webhook's path).
   */
  private keep(request: InboundRequest, admitted: Admitted, body: ReceivedBody, checked: Checked): Promise<Answer> {
    const known: Known = { source: admitted.source, bodyRead: true, verification: checked.verification };
    const delivery = this.step(known, () => this.newDelivery(request, admitted, body, checked));
    if (delivery instanceof Finished) return Promise.resolve(delivery.answer);
    const committed = this.step(known, () => this.options.queue.enqueue(delivery));
    if (committed instanceof Finished) return Promise.resolve(committed.answer);
    return committed.then(
      (outcome) => {
        const answer = this.step(known, () => this.storedAnswer(admitted, checked, outcome));
        return answer instanceof Finished ? answer.answer : answer;
      },
      (error: unknown) => this.refusal(error, known),
    );
  }

  /** The delivery to keep, with its event type and the forwards its routes give it. */
  private newDelivery(request: InboundRequest, admitted: Admitted, body: ReceivedBody, checked: Checked): NewDelivery {
    const { source, rule, contentType } = admitted;
    const { verification, deliveryId } = checked;
    const failed = verification.status === 'failed';
    const delivery: NewDelivery = {
      id: newDeliveryId(),
      source,
      receivedAt: Date.now(),
      method: request.method,
      query: request.query,
      contentType: contentType ?? '',
      remoteAddress: clientAddress(request.socketAddress, request.headers['x-forwarded-for'], this.options.trustedProxies),
      headers: headerList(request.rawHeaders, this.options.redactHeaders),
      raw: body.raw,
      parsedBody: body.stored,
      verification,
      dedupKey: failed ? null : (dedupHeaderValue(request.headers, rule.dedupHeader) ?? deliveryId ?? null),
    };
    delivery.eventType = eventTypeOf(
      {
        scheme: verification.scheme,
        headers: delivery.headers,
        contentType: delivery.contentType,
        raw: body.raw,
        ...receivedBodyFields(body),
      },
      rule.eventType,
    );
    if (!failed && rule.routes.length > 0) {
      delivery.forwards = this.forwardsOf(rule, request, body, delivery.eventType ?? null);
    }
    return delivery;
  }

  /**
   * The answer to a delivery the write queue committed, built field by
   * field: spreading the reply into it cost 7 to 12 µs of CPU per webhook
   * (bench/RESULTS.md, "fewer µs per webhook").
   */
  private storedAnswer({ source, rule }: Admitted, { verification }: Checked, outcome: AppendOutcome): Answer {
    if (verification.status === 'failed') {
      const refusal = problemAnswer('signature_invalid', `${signatureDetail(verification)} The delivery was kept, as failed.`);
      return { ...refusal, source, id: outcome.id, verification };
    }
    const receivedAt = isoTime(outcome.receivedAt);
    const standard = outcome.duplicate
      ? JSON.stringify({ id: outcome.id, source, receivedAt, duplicate: true })
      : JSON.stringify({ id: outcome.id, source, receivedAt });
    const reply =
      rule.answer === undefined
        ? { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: standard }
        : renderAnswer(rule.answer, { id: outcome.id, source, receivedAt }, standard);
    return {
      status: reply.status,
      headers: reply.headers,
      body: reply.body,
      outcome: outcome.duplicate ? 'duplicate' : 'stored',
      source,
      id: outcome.id,
      verification,
    };
  }

  /** Runs one step; what it throws becomes the answer, told what is `known` of the request so far. */
  private step<T>(known: Known, run: () => T): T | Finished {
    try {
      return run();
    } catch (error) {
      return new Finished(this.refusal(error, known));
    }
  }

  /** `step` for a step that ends later: one promise, no async function around it (this is every webhook's path). */
  private stepAsync<T>(known: Known, run: () => Promise<T>): Promise<T | Finished> {
    const refused = (error: unknown): Finished => new Finished(this.refusal(error, known));
    try {
      return run().then(undefined, refused);
    } catch (error) {
      return Promise.resolve(refused(error));
    }
  }

  /** The answer to an error thrown by a step. A body not read to its end closes the connection after the answer. */
  private refusal(error: unknown, { source, bodyRead, verification }: Known): Answer {
    if (error instanceof BodyAbortedError) {
      return { ...problemAnswer('request_timeout', error.message), aborted: true, ...(source === undefined ? {} : { source }) };
    }
    const answer = answerForError(error, this.options.retryAfterSeconds);
    if (source !== undefined) answer.source = source;
    if (verification !== undefined && verification.status !== 'none') answer.verification = verification;
    if (!bodyRead) answer.closeConnection = true;
    return answer;
  }

  /** The forwards a delivery gets: one per destination whose route matches (CONTRACT 6). */
  private forwardsOf(rule: SourceRule, request: InboundRequest, received: ReceivedBody, eventType: string | null): NewForward[] {
    const destinations = destinationsFor(rule.routes, {
      body: () => received.value(),
      headers: () => filterHeaders(request.headers, this.options.redactHeaders),
      query: () => filterQuery(request.query),
      // The type the delivery is stored with, not derived again.
      eventType,
    });
    return destinations.map(({ destination, transform }) => ({ id: newDeliveryId(), destination, transform }));
  }

  private handshakeAnswer(reply: HandshakeReply, source: string, verification?: Verification): Answer {
    if (reply.refused !== undefined) return { ...problemAnswer('handshake_failed', reply.refused), source };
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
}

/** A source name a sender may post to: not the one Reception keeps its notifications under (docs/alerts.md). */
function notReserved(source: string): string {
  if (source === ISSUES_SOURCE) {
    throw new ProblemError(
      'invalid_source',
      `The source name ${ISSUES_SOURCE} is reserved: Reception keeps its own notifications of issues under it.`,
    );
  }
  return source;
}

/** The answer's detail for a failed check: the scheme and what failed. */
function signatureDetail(verification: Verification): string {
  return failureSentence(verification.scheme, verification.reason);
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
