import { describe, expect, it } from 'vitest';
import { nearName } from '../../../src/platform/text/edit-distance.js';

/** The settings of a destination, as the config file's schema has them. */
const DESTINATION = [
  'url',
  'pull',
  'timeoutMs',
  'concurrency',
  'rateLimit',
  'retry',
  'ordered',
  'headers',
  'sign',
  'allowPrivateNetwork',
];

describe('nearName ("did you mean" for config keys)', () => {
  it('catches plurals, singulars and other spellings that edit distance alone misses', () => {
    expect(nearName('retries', DESTINATION)).toBe('retry');
    expect(nearName('header', DESTINATION)).toBe('headers');
    expect(nearName('Concurrency', DESTINATION)).toBe('concurrency');
    expect(nearName('timeout_ms', DESTINATION)).toBe('timeoutMs');
    expect(nearName('allow-private-network', DESTINATION)).toBe('allowPrivateNetwork');
  });

  it('takes a name that begins another, or one that it begins, when they share most of it', () => {
    expect(nearName('timeout', DESTINATION)).toBe('timeoutMs');
    expect(nearName('concurrencyLimit', DESTINATION)).toBe('concurrency');
    expect(nearName('allowPrivate', DESTINATION)).toBe('allowPrivateNetwork');
  });

  it('still finds typos, within more edits for a longer name', () => {
    expect(nearName('concurency', DESTINATION)).toBe('concurrency');
    expect(nearName('ordred', DESTINATION)).toBe('ordered');
    expect(nearName('urk', DESTINATION)).toBe('url');
    expect(nearName('alowPrivatNetwrk', DESTINATION)).toBe('allowPrivateNetwork');
  });

  it('suggests nothing for an unrelated key, a short one included', () => {
    for (const key of ['foo', 'to', 'colour', 'flavour', 'burst', 'x', 'priority', 'webhook', 'retention', 'tim', 'al']) {
      expect(nearName(key, DESTINATION), key).toBeUndefined();
    }
    // A prefix that is less than half the name is no hint.
    expect(nearName('time', ['timeoutMs', 'timestamp'])).toBeUndefined();
  });
});
