import { describe, expect, it } from 'vitest';
import { classifyMediaType, hasConflictingContentTypes } from '../../../src/body/media-type.js';

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
    'text/plain',
    'text/json',
    'text/html; charset=utf-8',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/octet-stream',
    'application/jsonx',
    'application/json-seq',
    'application/json+xml',
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
