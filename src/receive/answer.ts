import { PROBLEM_CONTENT_TYPE, ProblemError, problemFor, type ProblemCode } from '../platform/errors/problem-catalogue.js';
import { BodyBudgetSpentError } from '../body/body-budget.js';
import { type Verification } from '../deliveries/delivery-store.js';
import { StoreUnavailableError } from '../platform/db/store-errors.js';
import type { RefusalFacts } from '../refusals/refusal-keeper.js';

/** What the adapter writes back. */
export interface Answer {
  status: number;
  /** A fresh object for each answer, never shared: the adapter adds its own headers to it (Content-Length, Connection). */
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
  /** The problem answered, when it is one. */
  problem?: { code: ProblemCode; detail: string };
  /** A 503 because the store could not take the delivery (not a refusal to keep). */
  storeFailed?: boolean;
  /**
   * A refusal to keep (CONTRACT 9): set on a 4xx answer (not the 401 of a
   * delivery kept as failed) and a 503 that the store did not cause, and
   * on an aborted request, which the adapter keeps only when an answer was
   * written after all (the parser's 408 or 400).
   */
  refused?: RefusalFacts;
}

const PROBLEM_HEADERS = { 'content-type': PROBLEM_CONTENT_TYPE } as const;

/** A problem answer (RFC 9457). */
export function problemAnswer(code: ProblemCode, detail: string): Answer {
  const problem = problemFor(code, detail);
  return {
    status: problem.status,
    headers: { ...PROBLEM_HEADERS },
    body: JSON.stringify(problem),
    outcome: code,
    problem: { code, detail },
  };
}

/** The answer to an error a step threw: its problem, or a 503 or 500 to retry later. */
export function answerForError(error: unknown, retryAfterSeconds = 5): Answer {
  if (error instanceof ProblemError) {
    const answer = problemAnswer(error.code, error.message);
    Object.assign(answer.headers, error.headers);
    return answer;
  }
  if (error instanceof BodyBudgetSpentError) {
    // Load shed on purpose: the answer and its log line say so, not as a failure.
    return retryLater(
      'storage_unavailable',
      'This server is taking in as many bodies as it holds at once; retry later.',
      retryAfterSeconds,
    );
  }
  if (error instanceof StoreUnavailableError) {
    const answer = retryLater(
      'storage_unavailable',
      'The inbox cannot take this delivery right now; retry later.',
      retryAfterSeconds,
      error,
    );
    answer.storeFailed = true;
    return answer;
  }
  return retryLater('internal_error', 'The delivery could not be received; retry later.', retryAfterSeconds, error);
}

/** A refusal that the sender should retry: with `Retry-After`, and the error to log when it is a failure. */
function retryLater(code: ProblemCode, detail: string, retryAfterSeconds: number, error?: unknown): Answer {
  const answer = problemAnswer(code, detail);
  answer.headers['retry-after'] = String(retryAfterSeconds);
  if (error !== undefined) answer.error = error;
  return answer;
}

/**
 * Whether an answer is a refusal to keep (CONTRACT 9): any 4xx but the 401
 * of a delivery kept as failed (it has an id: it is a delivery), and a 503
 * that the store did not cause (a body turned away while too many were
 * arriving). An aborted request is one too, kept only if it was answered.
 */
export function isRefusal(answer: Answer): boolean {
  if (answer.problem === undefined || answer.id !== undefined) return false;
  if (answer.aborted === true) return true;
  return (answer.status >= 400 && answer.status < 500) || (answer.status === 503 && answer.storeFailed !== true);
}
