import { describe, expect, it } from 'vitest';
import type { ForwardSummary } from '../../../web/src/delivery.js';
import { badgeState, latestPerDestination, mergeForwards } from '../../../web/src/forward-state.js';

/** One row of GET /api/forwards, as the badges read it. */
function listed(destination: string, status: ForwardSummary['status']): ForwardSummary {
  return { destination, status };
}

describe("a row's forward badge", () => {
  it('counts each destination by its latest forward (oldest first, as a Delivery lists them)', () => {
    const resent: ForwardSummary[] = [
      { destination: 'app', status: 'failed' },
      { destination: 'app', status: 'succeeded' },
    ];
    expect(latestPerDestination(resent)).toEqual([{ destination: 'app', status: 'succeeded' }]);
    expect(badgeState(resent)).toBe('forwarded');
    // A later failure is a failure again; another destination's failure still shows.
    expect(badgeState([...resent, { destination: 'app', status: 'failed' }])).toBe('failed');
    expect(badgeState([...resent, { destination: 'audit', status: 'failed' }])).toBe('failed');
    expect(
      badgeState([
        { destination: 'app', status: 'failed' },
        { destination: 'app', status: 'pending' },
      ]),
    ).toBe('forwarding');
  });

  it('takes the newest of the newest forwards read (newest first) over what the row had', () => {
    const row: ForwardSummary[] = [
      { destination: 'app', status: 'failed' },
      { destination: 'audit', status: 'succeeded' },
    ];
    const merged = mergeForwards(row, [listed('app', 'succeeded'), listed('app', 'failed')]);
    expect(merged).toEqual([
      { destination: 'audit', status: 'succeeded' },
      { destination: 'app', status: 'succeeded' },
    ]);
    expect(badgeState(merged)).toBe('forwarded');
  });
});
