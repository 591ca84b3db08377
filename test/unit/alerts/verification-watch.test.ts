import { describe, expect, it } from 'vitest';
import { VerificationWatch, WINDOW_MS } from '../../../src/alerts/verification-watch.js';
import { withoutNotifyDestinations } from '../../../src/alerts/without-notify-destinations.js';
import { RecordingSignals } from '../../helpers/recording-signals.js';

describe('VerificationWatch: 10 failures in a sliding 5 minutes', () => {
  const watch = (): { signals: RecordingSignals; failed: (source: string, at: number) => void } => {
    const signals = new RecordingSignals();
    let now = 0;
    const w = new VerificationWatch(signals, () => now);
    return {
      signals,
      failed: (source, at) => {
        now = at;
        w.failed(source, `bad signature at ${at}`);
      },
    };
  };

  it('the 10th failure within the window is an occurrence, and so is each further one', () => {
    const { signals, failed } = watch();
    for (let i = 0; i < 9; i++) failed('stripe', i * 1000);
    expect(signals.calls).toEqual([]);
    failed('stripe', 9000);
    expect(signals.calls).toEqual([
      { call: 'occurred', kind: 'verification_failing', subject: 'stripe', error: 'bad signature at 9000' },
    ]);
    failed('stripe', 10_000);
    expect(signals.occurrences('verification_failing', 'stripe')).toBe(2);
  });

  it('failures spread over more than 5 minutes are not, and sources count apart', () => {
    const { signals, failed } = watch();
    const step = WINDOW_MS / 9 + 1;
    for (let i = 0; i < 10; i++) failed('github', i * step);
    expect(signals.calls).toEqual([]);
    // 9 of another source in between change nothing for either.
    for (let i = 0; i < 9; i++) failed('shopify', 10 * step + i);
    expect(signals.calls).toEqual([]);
    // The window slides: the last 10 of github, once close enough together, count.
    for (let i = 0; i < 10; i++) failed('github', 20 * step + i);
    expect(signals.occurrences('verification_failing', 'github')).toBe(1);
    expect(signals.occurrences('verification_failing', 'shopify')).toBe(0);
  });
});

describe('withoutNotifyDestinations', () => {
  it('drops occurrences of the destination kinds about a notify destination, and nothing else', () => {
    const signals = new RecordingSignals();
    const names = new Set(['slack']);
    const wrapped = withoutNotifyDestinations(signals, names);
    for (const kind of ['destination_down', 'dead_letters', 'backlog'] as const) {
      wrapped.occurred(kind, 'slack', 'x');
      wrapped.occurred(kind, 'shop', 'x');
    }
    // A transform or a source may share the name: it is not a destination.
    wrapped.occurred('transform_failing', 'slack', 'x');
    wrapped.occurred('verification_failing', 'slack', 'x');
    wrapped.cleared('dead_letters', 'slack');
    expect(signals.calls.map((c) => `${c.call} ${c.kind} ${c.subject}`)).toEqual([
      'occurred destination_down shop',
      'occurred dead_letters shop',
      'occurred backlog shop',
      'occurred transform_failing slack',
      'occurred verification_failing slack',
      'cleared dead_letters slack',
    ]);
    // The names are read at each call (a reload changes them).
    names.delete('slack');
    wrapped.occurred('backlog', 'slack', 'x');
    expect(signals.occurrences('backlog', 'slack')).toBe(1);
  });
});
