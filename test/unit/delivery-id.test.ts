import { describe, expect, it } from 'vitest';
import { newDeliveryId } from '../../src/deliveries/delivery-id.js';

describe('newDeliveryId', () => {
  it('is a URL-safe UUIDv7 whose first 48 bits are the time', () => {
    const now = Date.UTC(2026, 10, 22, 1, 2, 3, 456);
    const id = newDeliveryId(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(encodeURIComponent(id)).toBe(id);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('sorts by time and never repeats', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => newDeliveryId(1_700_000_000_000 + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 10; i < ids.length; i += 10) expect((ids[i] ?? '') > (ids[i - 1] ?? '')).toBe(true);
  });
});
