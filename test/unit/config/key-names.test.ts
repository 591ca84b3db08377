import { describe, expect, it } from 'vitest';
import { childPath, mayName, settingNamed } from '../../../src/config/key-names.js';

describe('settingNamed', () => {
  it('knows the settings of every level of the schema, and their misspellings by one letter', () => {
    for (const name of [
      'strict',
      'sources',
      'verify',
      'secrets',
      'publicUrl',
      'handshake',
      'verifyToken',
      'dedup',
      'rateLimit',
      'perSeconds',
      'onFailure',
    ]) {
      expect(settingNamed(name), name).toBe(name);
    }
    expect(settingNamed('perSecond')).toBe('perSeconds');
    expect(settingNamed('VERIFY')).toBe('verify');
    expect(settingNamed('S3CRET2')).toBeUndefined();
    expect(settingNamed('colour')).toBeUndefined();
  });
});

describe('mayName and childPath', () => {
  it('names no key inside a secret setting, inside verify or handshake only settings, elsewhere words', () => {
    expect(mayName('sources.a.verify.secrets', 'secret')).toBe(false);
    expect(mayName('sources.a.verify', 'S3CRET2')).toBe(false);
    expect(mayName('sources.a.verify', 'colour')).toBe(false);
    expect(mayName('sources.a.handshake', 'TOPSECRET')).toBe(false);
    expect(mayName('sources.a.verify', 'secrts')).toBe(true);
    expect(mayName('sources["a b"].verify', 'hunter')).toBe(false);
    expect(mayName('sources.a.rateLimit', 'burst')).toBe(true);
    expect(mayName('', 'colour')).toBe(true);
    expect(mayName('', 'sourcs')).toBe(true);
    // What a secret typed without its key looks like, at any level.
    for (const key of ['whsec_REALSECRET', 'S3CR3T99', 'xoxb-token', 'shpss_abc', 'a'.repeat(25), 'two words']) {
      expect(mayName('sources.a', key), key).toBe(false);
      expect(mayName('', key), key).toBe(false);
    }
  });

  it('writes a key that is not a plain word in quotes, escaped for a terminal', () => {
    expect(childPath('', 'sources')).toBe('sources');
    expect(childPath('sources', 'a b')).toBe('sources["a b"]');
    expect(childPath('sources', '\u001b[2J')).toBe('sources["\\u001b[2J"]');
  });
});
