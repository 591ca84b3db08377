import { ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_CONTENT_TYPE, problemFor, type ProblemCode } from '../../platform/errors/problem-catalogue.js';

/**
 * Writes a problem answer (RFC 9457) that closes its connection: the one
 * writer of problems outside Fastify (whose routes answer through the error
 * handler in ../error-handler.ts). On a request's `ServerResponse` it writes
 * the whole answer and ends it. On a bare connection, for what never became
 * a request Node could answer (a parser refusal, `CONNECT`), it writes the
 * answer's bytes; the caller then ends or destroys the connection.
 * `headers`: extra response headers, such as `Allow`.
 */
export function writeProblem(
  to: ServerResponse | Duplex,
  code: ProblemCode,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const problem = problemFor(code, detail);
  const body = JSON.stringify(problem);
  const length = Buffer.byteLength(body);
  if (to instanceof ServerResponse) {
    to.shouldKeepAlive = false;
    to.writeHead(problem.status, {
      ...headers,
      'content-type': PROBLEM_CONTENT_TYPE,
      'content-length': length,
      connection: 'close',
    });
    to.end(body);
    return;
  }
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  to.write(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n${extra}Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
      `Content-Length: ${length}\r\nConnection: close\r\n\r\n${body}`,
  );
}
