import { describe, expect, it } from 'vitest';
import { PendingSignals } from '../../../src/issues/pending-signals.js';
import { MAX_ERROR_LENGTH, shownError } from '../../../src/issues/shown-error.js';

describe('PendingSignals', () => {
  it('sums a burst of occurrences per kind and subject, and keeps a clear in its place', () => {
    const pending = new PendingSignals();
    for (let at = 1; at <= 1000; at++) pending.occurred('dead_letters', 'app', at, at === 1000 ? null : `e${at}`);
    pending.cleared('dead_letters', 'app', 1001);
    pending.cleared('dead_letters', 'app', 1002);
    pending.occurred('dead_letters', 'app', 1003, 'again');
    pending.occurred('backlog', 'app', 5, null);
    const taken = pending.take();
    expect(pending.size).toBe(0);
    expect([...taken.values()]).toEqual([
      [
        { type: 'occurred', kind: 'dead_letters', subject: 'app', count: 1000, firstAt: 1, lastAt: 1000, lastError: 'e999' },
        { type: 'cleared', kind: 'dead_letters', subject: 'app', at: 1001 },
        { type: 'occurred', kind: 'dead_letters', subject: 'app', count: 1, firstAt: 1003, lastAt: 1003, lastError: 'again' },
      ],
      [{ type: 'occurred', kind: 'backlog', subject: 'app', count: 1, firstAt: 5, lastAt: 5, lastError: null }],
    ]);
  });

  it('puts refused signals back in front of those that came since, summed where they meet', () => {
    const pending = new PendingSignals();
    pending.occurred('backlog', 'app', 1, 'old');
    const [entry] = [...pending.take()];
    if (entry === undefined) throw new Error('nothing was pending');
    const [key, refused] = entry;
    pending.occurred('backlog', 'app', 2, null);
    pending.occurred('backlog', 'app', 3, null);
    pending.putBack(key, refused);
    expect([...pending.take().values()]).toEqual([
      [{ type: 'occurred', kind: 'backlog', subject: 'app', count: 3, firstAt: 1, lastAt: 3, lastError: 'old' }],
    ]);
  });
});

describe('shownError', () => {
  it('keeps text as it is, NUL and lone surrogates as U+FFFD (PostgreSQL cannot hold them)', () => {
    expect(shownError('<b>HTTP 500</b> \u{1F600}')).toBe('<b>HTTP 500</b> \u{1F600}');
    expect(shownError('a\u0000b\ud800c')).toBe('a\uFFFDb\uFFFDc');
  });

  it('cuts a long error with an ellipsis, never between the halves of a surrogate pair', () => {
    const long = shownError('x'.repeat(5000));
    expect(long).toHaveLength(MAX_ERROR_LENGTH);
    expect(long.endsWith('…')).toBe(true);
    const emoji = shownError(`${'x'.repeat(MAX_ERROR_LENGTH - 2)}\u{1F600}${'y'.repeat(10)}`);
    expect(emoji).toBe(`${'x'.repeat(MAX_ERROR_LENGTH - 2)}…`);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(emoji)).toBe(false);
  });
});
