import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { validateConfig } from '../../../src/config/source-config.js';
import { SourceRules } from '../../../src/receive/source-rules.js';

/** `accept` and `response` in the config file (CONTRACT 9): what loads, and every mistake named by its key. */

const problems = (yaml: string): string[] => validateConfig(parseYaml(yaml));

describe('accept', () => {
  it('takes any of the kinds, and defaults to json and form', () => {
    const text = `sources:
  sns: { accept: [text] }
  mail: { accept: [multipart, form] }
  everything: { accept: [json, form, multipart, text, xml, any] }
  plain: {}
`;
    expect(problems(text)).toEqual([]);
    const rules = SourceRules.fromConfig(parseYaml(text), { maxBodyBytes: 1024, anyJson: false });
    expect(rules.forSource('sns')?.accept).toEqual(['text']);
    expect(rules.forSource('plain')?.accept).toEqual(['json', 'form']);
    expect(rules.forSource('not-named')?.accept).toEqual(['json', 'form']);
  });

  it('names a misspelt kind, with the one meant', () => {
    expect(problems('sources: { mail: { accept: [json, multiparts] } }')).toEqual([
      'sources.mail.accept.1: expected one of "json", "form", "multipart", "text", "xml", "any", got "multiparts"; did you mean "multipart"?',
    ]);
    expect(problems('sources: { mail: { accept: [XML] } }')).toEqual([
      'sources.mail.accept.0: expected one of "json", "form", "multipart", "text", "xml", "any", got "XML"; did you mean "xml"?',
    ]);
    expect(problems('sources: { mail: { accept: [binary] } }')[0]).toMatch(/got "binary"$/);
  });

  it('refuses an empty list, a list given as one word, a kind listed twice, and anyJson without json', () => {
    expect(problems('sources: { a: { accept: [] } }')).toEqual([expect.stringMatching(/^sources\.a\.accept: .*got \[\]$/)]);
    expect(problems('sources: { a: { accept: text } }')).toEqual([expect.stringMatching(/^sources\.a\.accept: .*got "text"$/)]);
    expect(problems('sources: { a: { accept: [text, json, text] } }')).toEqual(['sources.a.accept: "text" is listed twice']);
    expect(problems('sources: { a: { accept: [text], anyJson: true } }')).toEqual([
      'sources.a.anyJson: only means something for a source whose accept list has "json"',
    ]);
  });

  it('says "did you mean" for a misspelt key', () => {
    expect(problems('sources: { a: { acept: [text] } }')).toEqual([
      'sources.a.acept: unknown key (did you mean "accept"? see docs/config.md)',
    ]);
    expect(problems('sources: { a: { respone: { status: 202 } } }')).toEqual([
      'sources.a.respone: unknown key (did you mean "response"? see docs/config.md)',
    ]);
  });
});

describe('response', () => {
  it('takes a status from 200 to 299, headers and a body', () => {
    expect(
      problems(`sources:
  a: { response: { status: 202, headers: { X-Handled-By: reception, Content-Type: application/json }, body: '{"id": "{id}"}' } }
  b: { response: { status: 204 } }
  c: { response: { body: ok } }
`),
    ).toEqual([]);
  });

  it.each([199, 300, 404, 500, 202.5])('refuses status %s', (status) => {
    expect(problems(`sources: { a: { response: { status: ${status} } } }`)).toEqual([
      expect.stringMatching(new RegExp(`^sources\\.a\\.response\\.status: .*got ${status}$`)),
    ]);
  });

  it.each([
    'Content-Length',
    'transfer-encoding',
    'Connection',
    'Keep-Alive',
    'Upgrade',
    'TE',
    'Trailer',
    'Proxy-Connection',
    'Date',
    'X-Content-Type-Options',
    'Content-Security-Policy',
  ])('refuses the header %s, which Reception or Node sets', (name) => {
    expect(problems(`sources: { a: { response: { headers: { ${name}: "1" } } } }`)).toEqual([
      `sources.a.response.headers.${name}: set by Reception or Node itself, it cannot be configured`,
    ]);
  });

  it('refuses a header name or value that HTTP cannot carry, without showing the value', () => {
    expect(problems('sources: { a: { response: { headers: { "bad name": x } } } }')).toEqual([
      'sources.a.response.headers["bad name"]: not a valid header name',
    ]);
    expect(problems('sources: { a: { response: { headers: { X-A: "line\\r\\nSet-Cookie: s=1" } } } }')).toEqual([
      'sources.a.response.headers.X-A: a header value holds visible Latin-1 characters, spaces and tabs only',
    ]);
    expect(problems('sources: { a: { response: { headers: { X-A: "☃" } } } }')).toHaveLength(1);
    expect(problems('sources: { a: { response: { headers: { X-A: 1 } } } }')).toEqual([
      expect.stringMatching(/^sources\.a\.response\.headers\.X-A: .*not shown/),
    ]);
  });

  it('refuses a body with a status that has no content, an unknown key, and a body too long', () => {
    expect(problems('sources: { a: { response: { status: 204, body: ok } } }')).toEqual([
      'sources.a.response.body: a 204 answer has no content; leave body out or choose another status',
    ]);
    expect(problems('sources: { a: { response: { status: 202, stauts: 1 } } }')).toEqual([
      'sources.a.response.stauts: unknown key (did you mean "status"? see docs/config.md)',
    ]);
    expect(problems(`sources: { a: { response: { body: "${'x'.repeat(64 * 1024 + 1)}" } } }`)).toEqual([
      expect.stringMatching(/^sources\.a\.response\.body: /),
    ]);
  });
});
