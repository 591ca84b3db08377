import { describe, expect, it } from 'vitest';
import { bodyKindFor, classifyMediaType, hasConflictingContentTypes, mediaTypeParameter } from '../../../src/body/media-type.js';

describe('classifyMediaType (CONTRACT 1)', () => {
  it.each([
    'application/json',
    'APPLICATION/JSON',
    'Application/Json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    '  application/json  ',
    'application/json ; charset=utf-8',
    'application/vnd.github+json',
    'application/cloudevents+json; charset=utf-8',
    'application/problem+json',
    'APPLICATION/VND.API+JSON',
    'application/merge-patch+json',
  ])('takes %j as JSON', (contentType) => {
    expect(classifyMediaType(contentType)).toBe('json');
  });

  it.each([
    'application/x-www-form-urlencoded',
    'Application/X-WWW-Form-Urlencoded',
    'application/x-www-form-urlencoded; charset=utf-8',
    'application/x-www-form-urlencoded;charset=UTF-8',
  ])('takes %j as form data', (contentType) => {
    expect(classifyMediaType(contentType)).toBe('form');
  });

  it.each([
    ['multipart/form-data; boundary=x', 'multipart'],
    ['Multipart/Form-Data;boundary="a b"', 'multipart'],
    ['text/plain', 'text'],
    ['TEXT/PLAIN; charset=UTF-8', 'text'],
    ['application/xml', 'xml'],
    ['text/xml; charset=iso-8859-1', 'xml'],
    ['application/atom+xml', 'xml'],
    ['application/soap+xml; charset=utf-8', 'xml'],
  ])('takes %j as %s (CONTRACT 9)', (contentType, kind) => {
    expect(classifyMediaType(contentType)).toBe(kind);
  });

  it.each([
    'text/json',
    'text/html; charset=utf-8',
    'text/plainx',
    'multipart/mixed; boundary=x',
    'multipart/form-datax',
    'application/+xml',
    'application/a b+xml',
    'application/xmlx',
    'application/octet-stream',
    'application/jsonx',
    'application/json-seq',
    'application/+json',
    'application/a b+json',
    'application/x-www-form-urlencoded-extra',
    'application',
    'json',
    '',
    ';charset=utf-8',
  ])('refuses %j', (contentType) => {
    expect(classifyMediaType(contentType)).toBeUndefined();
  });

  it('refuses a missing Content-Type', () => {
    expect(classifyMediaType(undefined)).toBeUndefined();
  });
});

describe('bodyKindFor (CONTRACT 9: accept)', () => {
  it('takes the kinds the accept list names, and everything else with any', () => {
    expect(bodyKindFor('application/json', ['json', 'form'])).toBe('json');
    expect(bodyKindFor('text/plain', ['json', 'form'])).toBeUndefined();
    expect(bodyKindFor('text/plain', ['text'])).toBe('text');
    expect(bodyKindFor('application/json', ['text'])).toBeUndefined();
    expect(bodyKindFor('image/png', ['json', 'any'])).toBe('any');
    expect(bodyKindFor(undefined, ['any'])).toBe('any');
    expect(bodyKindFor(undefined, ['json'])).toBeUndefined();
    // A type that another kind parses, not listed: any takes it, unparsed.
    expect(bodyKindFor('application/json', ['any'])).toBe('any');
    expect(bodyKindFor('multipart/form-data; boundary=x', ['json', 'multipart', 'any'])).toBe('multipart');
  });
});

describe('mediaTypeParameter', () => {
  it('reads a parameter in any case, quoted or not', () => {
    expect(mediaTypeParameter('text/plain; Charset="ISO-8859-1"', 'charset')).toBe('iso-8859-1');
    expect(mediaTypeParameter('text/plain;charset=utf-8', 'charset')).toBe('utf-8');
    expect(mediaTypeParameter('text/plain', 'charset')).toBeUndefined();
    expect(mediaTypeParameter('text/plain; xcharset=a', 'charset')).toBeUndefined();
  });
});

describe('hasConflictingContentTypes', () => {
  it('is false for none, one, or the same value repeated (names in any case, values trimmed)', () => {
    expect(hasConflictingContentTypes(['Host', 'x'])).toBe(false);
    expect(hasConflictingContentTypes(['Content-Type', 'application/json'])).toBe(false);
    expect(hasConflictingContentTypes(['Content-Type', 'application/json', 'CONTENT-TYPE', ' application/json '])).toBe(false);
    expect(hasConflictingContentTypes(['content-type', 'application/json', 'content-type', 'Application/JSON'])).toBe(false);
  });

  it('is true when two lines disagree, even in parameters only', () => {
    expect(hasConflictingContentTypes(['content-type', 'application/json', 'X-A', 'b', 'content-type', 'text/plain'])).toBe(true);
    expect(hasConflictingContentTypes(['content-type', 'a/b', 'content-type', 'a/b', 'content-type', 'a/b; x=1'])).toBe(true);
  });

  it('looks at header names only, never at a value that reads like one', () => {
    expect(hasConflictingContentTypes(['X-Note', 'content-type', 'content-type', 'application/json'])).toBe(false);
  });
});
