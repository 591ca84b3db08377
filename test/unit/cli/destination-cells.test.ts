import { describe, expect, it } from 'vitest';
import { circuitCell, destinationCells } from '../../../src/cli/destinations.js';
import type { DestinationRow } from '../../../src/cli/outbox-api.js';

const row = (over: Partial<DestinationRow>): DestinationRow => ({
  name: 'bus',
  kind: 'nats',
  url: 'nats://127.0.0.1:4222',
  paused: false,
  pending: 2,
  failed: 0,
  oldestPendingAt: null,
  lastSuccessAt: null,
  lastFailureAt: null,
  lastError: null,
  connection: null,
  circuit: { state: 'closed', since: null, consecutiveFailures: 0, until: null },
  ...over,
});

describe('reception destinations: the CONNECTION column', () => {
  it('shows a broker connected, or its state and why, escaped for the terminal', () => {
    const since = new Date().toISOString();
    expect(destinationCells(row({ connection: { state: 'connected', lastError: null, since } }), Date.now(), true)).toEqual([
      'bus',
      'nats',
      'nats://127.0.0.1:4222',
      'connected',
      'closed',
      'no',
      '2',
      '0',
      '-',
      '-',
    ]);
    const down = row({ connection: { state: 'disconnected', lastError: 'connect ECONNREFUSED 127.0.0.1:4222\u001b[2J', since } });
    expect(destinationCells(down, Date.now(), true)[3]).toBe('disconnected (connect ECONNREFUSED 127.0.0.1:4222\\e[2J)');
  });

  it('is "-" for an HTTP destination among brokers, and absent without brokers', () => {
    const http = row({ kind: 'http', url: 'https://app.example/hooks' });
    expect(destinationCells(http, Date.now(), true)[3]).toBe('-');
    expect(destinationCells(http, Date.now())).toHaveLength(9);
  });
});

describe('reception destinations: the CIRCUIT column', () => {
  const now = Date.UTC(2026, 0, 5, 9, 0, 0);
  it('shows closed (with the failures in a row), open until its probe, half open', () => {
    const circuit = (over: Partial<DestinationRow['circuit']>): DestinationRow['circuit'] => ({
      state: 'closed',
      since: null,
      consecutiveFailures: 0,
      until: null,
      ...over,
    });
    expect(circuitCell(circuit({}), now)).toBe('closed');
    expect(circuitCell(circuit({ consecutiveFailures: 4 }), now)).toBe('closed (4 failed)');
    expect(circuitCell(circuit({ state: 'open', until: new Date(now + 25_000).toISOString() }), now)).toBe('open (probe in 25s)');
    expect(circuitCell(circuit({ state: 'open', until: new Date(now - 1).toISOString() }), now)).toBe('open (probe due)');
    expect(circuitCell(circuit({ state: 'half_open', until: new Date(now + 5000).toISOString() }), now)).toBe('half open');
  });
});
