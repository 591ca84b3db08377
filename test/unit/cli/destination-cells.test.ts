import { describe, expect, it } from 'vitest';
import { destinationCells } from '../../../src/cli/destinations.js';
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
    expect(destinationCells(http, Date.now())).toHaveLength(8);
  });
});
