import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_CONTENT_TYPE } from '../../../../src/platform/errors/problem-catalogue.js';
import { writeProblem } from '../../../../src/receive/edge/write-problem.js';

interface Received {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The one problem writer, read back by Node's own HTTP client over loopback. */
describe('writeProblem', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      writeProblem(res, 'not_implemented', 'On a request.', { 'retry-after': '5' });
    });
    // CONNECT leaves the server a bare socket, as a parser refusal does.
    server.on('connect', (_req, socket) => {
      writeProblem(socket, 'method_not_allowed', 'On a bare connection.', { Allow: 'POST' });
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function send(method: string): Promise<Received> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path: method === 'CONNECT' ? 'example.com:443' : '/' });
      const read = (status: number, headers: IncomingHttpHeaders, stream: NodeJS.ReadableStream): void => {
        let body = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => {
          body += chunk;
        });
        stream.on('end', () => resolve({ status, headers, body }));
      };
      req.on('response', (res) => read(res.statusCode ?? 0, res.headers, res));
      // Node's client hands a CONNECT answer over with the socket; what follows the head is the body.
      req.on('connect', (res, socket, head) => {
        let body = head.toString('utf8');
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          body += chunk;
        });
        socket.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it.each([
    ['GET', 501, 'not_implemented', 'On a request.', 'retry-after', '5'],
    ['CONNECT', 405, 'method_not_allowed', 'On a bare connection.', 'allow', 'POST'],
  ])(
    'writes the same problem answer on a request and on a bare connection (%s)',
    async (method, status, code, detail, header, value) => {
      const answer = await send(method);
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers[header]).toBe(value);
      expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
      expect(JSON.parse(answer.body)).toEqual({
        type: `urn:reception:problem:${code}`,
        title: expect.any(String),
        status,
        detail,
        code,
      });
    },
  );
});
