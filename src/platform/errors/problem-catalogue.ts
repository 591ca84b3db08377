/**
 * The one catalogue of error answers. Every error a client can see has a
 * `code` listed here; `test/unit/errors.test.ts` fails when a code is missing
 * from docs/errors.md.
 */
export const problemCatalogue = {
  invalid_source: { status: 400, title: 'Invalid source name' },
  empty_body: { status: 400, title: 'Empty body' },
  invalid_json: { status: 400, title: 'Invalid JSON' },
  invalid_form: { status: 400, title: 'Invalid form data' },
  invalid_multipart: { status: 400, title: 'Invalid multipart body' },
  json_not_object: { status: 422, title: 'JSON body is not an object' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  storage_unavailable: { status: 503, title: 'Storage unavailable' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  not_found: { status: 404, title: 'Not found' },
  invalid_query: { status: 400, title: 'Invalid query' },
  invalid_body: { status: 400, title: 'Invalid request body' },
  request_timeout: { status: 408, title: 'Request timeout' },
  bad_request: { status: 400, title: 'Bad request' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  not_implemented: { status: 501, title: 'Not implemented' },
  internal_error: { status: 500, title: 'Internal error' },
  signature_invalid: { status: 401, title: 'Signature invalid' },
  handshake_failed: { status: 403, title: 'Handshake failed' },
  unknown_source: { status: 404, title: 'Unknown source' },
  rate_limited: { status: 429, title: 'Rate limited' },
  lease_lost: { status: 409, title: 'Lease lost' },
  not_pull: { status: 409, title: 'Not a pull destination' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof problemCatalogue;

/** The media type of every problem answer (RFC 9457), wherever it is written or described. */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';
export const PROBLEM_CONTENT_TYPE = `${PROBLEM_MEDIA_TYPE}; charset=utf-8`;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
}

/** An error that carries a catalogue code; anything else is answered as internal_error. */
export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  /** Extra response headers, such as `Retry-After` or `Allow`. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ProblemCode, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.name = 'ProblemError';
    this.code = code;
    this.status = problemCatalogue[code].status;
    this.headers = headers;
  }

  toProblem(): Problem {
    return problemFor(this.code, this.message);
  }
}

export function problemFor(code: ProblemCode, detail: string): Problem {
  const entry = problemCatalogue[code];
  return { type: `urn:reception:problem:${code}`, title: entry.title, status: entry.status, detail, code };
}
