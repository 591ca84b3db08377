import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearerToken, resolveToken, TOKEN_FILE, tokenFileWarning, tokenMatches } from '../../../src/platform/auth/token.js';
import { tempDir } from '../../helpers/temp-dir.js';

const TOKEN = 'rcp_0123456789abcdefghij';

describe('tokenMatches', () => {
  it('is true for the same token', () => {
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches(TOKEN, `${TOKEN}`.slice(0))).toBe(true);
  });

  it.each([
    ['a different token', 'rcp_0123456789abcdefghik'],
    ['a prefix', TOKEN.slice(0, -1)],
    ['a longer token', `${TOKEN}x`],
    ['another case', TOKEN.toUpperCase()],
    ['an empty string', ''],
    ['a token with a space', ` ${TOKEN}`],
    ['a much longer string', TOKEN.repeat(100)],
  ])('is false for %s, without throwing on a length mismatch', (_label, presented) => {
    expect(tokenMatches(TOKEN, presented)).toBe(false);
  });

  it('is false when nothing is presented', () => {
    expect(tokenMatches(TOKEN, undefined)).toBe(false);
  });

  it('compares the whole token, including non-ASCII characters', () => {
    expect(tokenMatches('tökén-0123456789ab', 'tökén-0123456789ab')).toBe(true);
    expect(tokenMatches('tökén-0123456789ab', 'tokén-0123456789ab')).toBe(false);
  });
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def-ghi_jkl', 'abc.def-ghi_jkl'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer   abc', 'abc'],
    ['Bearer abc  ', 'abc'],
    ['Bearer\tabc', 'abc'],
  ])('reads %j as %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([
    undefined,
    '',
    'Bearer',
    'Bearer ',
    'Bearerabc',
    'Basic dXNlcjpwYXNz',
    'Token abc',
    'abc',
    'Bearer abc def',
    ' Bearer abc',
  ])('finds no token in %j', (header) => {
    expect(bearerToken(header)).toBeUndefined();
  });
});

describe('resolveToken', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  it('uses RECEPTION_TOKEN when set and writes nothing', () => {
    expect(resolveToken(TOKEN, dir.path)).toEqual({ token: TOKEN, generated: false });
    expect(() => statSync(join(dir.path, TOKEN_FILE))).toThrow();
  });

  it('generates a token once, keeps it with mode 0600, and reads it back afterwards', () => {
    const data = join(dir.path, 'data');
    const first = resolveToken(undefined, data);
    expect(first.generated).toBe(true);
    expect(first.token).toMatch(/^rcp_[A-Za-z0-9_-]{32}$/);
    const file = join(data, TOKEN_FILE);
    expect(first.file).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.token);
    expect(resolveToken(undefined, data)).toEqual({ token: first.token, generated: false, file });
  });

  it('generates a different token in another data directory', () => {
    const a = resolveToken(undefined, join(dir.path, 'a'));
    const b = resolveToken(undefined, join(dir.path, 'b'));
    expect(a.token).not.toBe(b.token);
  });

  it('trims what an operator wrote into the token file', () => {
    writeFileSync(join(dir.path, TOKEN_FILE), '  my-own-token-0123456789  \n');
    expect(resolveToken(undefined, dir.path)).toMatchObject({ token: 'my-own-token-0123456789', generated: false });
  });
});

describe('tokenFileWarning', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  it.each([
    [0o600, undefined],
    [0o400, undefined],
    [0o700, undefined],
    [0o611, undefined],
    [0o644, /can be read by other users of this machine \(mode 0644\).*API token.*chmod 600 /],
    [0o640, /can be read by other users .*\(mode 0640\)/],
    [0o620, /can be changed by other users .*\(mode 0620\)/],
    [0o666, /can be read and changed by other users .*\(mode 0666\)/],
  ])('for mode %o: %s', (mode, expected) => {
    const file = join(dir.path, TOKEN_FILE);
    writeFileSync(file, `${TOKEN}\n`);
    chmodSync(file, mode);
    const warning = tokenFileWarning(file);
    if (expected === undefined) expect(warning).toBeUndefined();
    else expect(warning).toMatch(expected);
    expect(warning ?? '').not.toContain(TOKEN);
  });
});
