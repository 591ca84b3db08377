import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../errors/problem-catalogue.js';

/**
 * JSON request bodies for the API routes (the webhook route parses its own).
 * Only a POST (the login) takes a body: on any other method a JSON body is
 * read and ignored, so that a client that sends one with its `DELETE` still
 * deletes. An empty body with a JSON Content-Type is no body; Fastify's own
 * parser refuses it. Keys such as `__proto__` stay plain data: `JSON.parse`
 * never touches prototypes.
 */
export function acceptEmptyJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (request.method !== 'POST' || text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ProblemError('invalid_body', 'The request body is not valid JSON.'), undefined);
    }
  });
}
