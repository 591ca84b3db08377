import { describe, expect, it } from 'vitest';
import { compileAnswer, renderAnswer } from '../../../src/receive/custom-answer.js';

const VALUES = { id: 'abc', source: 'say "hi" <b>', receivedAt: '2026-01-02T03:04:05.678Z' };
const STANDARD = '{"id":"abc"}';

describe('a source’s own answer (CONTRACT 9)', () => {
  it('replaces the placeholders, every time they appear, and nothing else', () => {
    const answer = compileAnswer({ status: 202, body: '{id}/{id} {source} at {receivedAt} {ID} {other} {{id}}' });
    expect(renderAnswer(answer, VALUES, STANDARD)).toEqual({
      status: 202,
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
      },
      body: 'abc/abc say "hi" <b> at 2026-01-02T03:04:05.678Z {ID} {other} {abc}',
    });
  });

  it('escapes values inside JSON and markup answers', () => {
    const json = compileAnswer({ headers: { 'Content-Type': 'application/vnd.api+json' }, body: '{"s":"{source}"}' });
    expect(JSON.parse(renderAnswer(json, VALUES, STANDARD).body)).toEqual({ s: 'say "hi" <b>' });
    const html = compileAnswer({ headers: { 'content-type': 'text/html' }, body: '<p title="{source}">' });
    expect(renderAnswer(html, VALUES, STANDARD).body).toBe('<p title="say &quot;hi&quot; &lt;b&gt;">');
    const xml = compileAnswer({ headers: { 'content-type': 'application/xml' }, body: '<s>{source}</s>' });
    expect(renderAnswer(xml, VALUES, STANDARD).body).toBe('<s>say &quot;hi&quot; &lt;b&gt;</s>');
  });

  it('keeps the standard JSON without a body of its own, and sends no content for 204 and 205', () => {
    expect(renderAnswer(compileAnswer({ status: 201, headers: { 'X-A': '1' } }), VALUES, STANDARD)).toMatchObject({
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-a': '1' },
      body: STANDARD,
    });
    for (const status of [204, 205]) {
      const rendered = renderAnswer(compileAnswer({ status }), VALUES, STANDARD);
      expect(rendered.body).toBe('');
      expect(rendered.headers['content-type']).toBeUndefined();
    }
  });

  it('never lets a configured header take the place of the guards', () => {
    // The config file refuses these names; were one to get through, the guard still wins.
    const answer = compileAnswer({ headers: { 'X-Content-Type-Options': 'sniff' }, body: 'x' });
    expect(renderAnswer(answer, VALUES, STANDARD).headers['x-content-type-options']).toBe('nosniff');
  });
});
