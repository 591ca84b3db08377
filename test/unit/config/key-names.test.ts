import { describe, expect, it } from 'vitest';
import { childPath, mayName, settingNamed } from '../../../src/config/key-names.js';

describe('settingNamed', () => {
  it('knows the settings of every level of the schema, and their misspellings by one letter', () => {
    for (const name of ['strict', 'sources', 'verify', 'secrets', 'publicUrl', 'handshake', 'verifyToken', 'dedup', 'rateLimit', 'perSeconds', 'onFailure']) {
      expect(settingNamed(name), name).toBe(name);
    }
    expect(settingNamed('perSecond')).toBe('perSeconds');
    expect(settingNamed('VERIFY')).toBe('verify');
    expect(settingNamed('S3CRET2')).toBeUndefined();
    expect(settingNamed('colour')).toBeUndefined();
  });
});

describe('mayName and childPath', () => {
  it('names no key inside a secret setting, and inside verify or handshake only settings', () => {
    expect(mayName('verify.secrets', 'secret')).toBe(false);
    expect(mayName('verify', 'S3CRET2')).toBe(false);
    expect(mayName('verify', 'secrts')).toBe(true);
    expect(mayName('rateLimit', 'burst')).toBe(true);
    expect(mayName('', 'colour')).toBe(true);
  });

  it('writes a key that is not a plain word in quotes, escaped for a terminal', () => {
    expect(childPath('', 'sources')).toBe('sources');
    expect(childPath('sources', 'a b')).toBe('sources["a b"]');
    expect(childPath('sources', '\u001b[2J')).toBe('sources["\\u001b[2J"]');
  });
});
