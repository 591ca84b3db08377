import { describe, expect, it } from 'vitest';
import { RefusalKeeper, type RefusalFacts, type RefusalSink } from '../../../src/refusals/refusal-keeper.js';
import type { NewRefusal } from '../../../src/refusals/refusals.js';

/** A sink that keeps what it is given, with room for `room` refusals. */
function sink(room = Infinity): RefusalSink & { kept: NewRefusal[]; dropped: number } {
  const kept: NewRefusal[] = [];
  const self = {
    kept,
    dropped: 0,
    hasRoom: () => kept.length < room,
    record: (refusal: NewRefusal) => kept.push(refusal),
    drop: () => {
      self.dropped++;
    },
  };
  return self;
}

const facts = (overrides: Partial<RefusalFacts> = {}): RefusalFacts => ({
  receivedAt: Date.UTC(2026, 10, 22),
  source: 'stripe',
  method: 'POST',
  code: 'unsupported_media_type',
  detail: 'Send JSON.',
  rawHeaders: ['Host', 'x', 'content-type', 'text/plain', 'Authorization', 'Bearer secret', 'Content-Type', 'text/other'],
  size: 10,
  body: [Buffer.from('hello')],
  bodyUnread: false,
  ...overrides,
});

describe('RefusalKeeper', () => {
  it('makes a refusal of what is known: status from the code, the first Content-Type, headers redacted', () => {
    const s = sink();
    new RefusalKeeper(s, new Set(['authorization'])).keep(facts());
    const [refusal] = s.kept;
    expect(refusal).toMatchObject({
      source: 'stripe',
      status: 415,
      code: 'unsupported_media_type',
      contentType: 'text/plain',
      size: 10,
      receivedAt: Date.UTC(2026, 10, 22),
    });
    expect(refusal?.headers).toContainEqual(['Authorization', '[redacted]']);
    expect(refusal?.preview.toString()).toBe('hello');
    expect(refusal?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps a copy of the first 4 KiB only, across chunks, never a view of the request buffers', () => {
    const s = sink();
    const big = Buffer.alloc(5 * 1024 * 1024, 0x61);
    new RefusalKeeper(s, new Set()).keep(facts({ body: [Buffer.from('ab'), big] }));
    const preview = s.kept[0]?.preview;
    expect(preview?.length).toBe(4096);
    expect(preview?.subarray(0, 3).toString()).toBe('aba');
    // One large chunk: still a copy, so that the refusal waiting to be written does not hold 5 MiB.
    new RefusalKeeper(s, new Set()).keep(facts({ body: [big] }));
    expect(s.kept[1]?.preview.length).toBe(4096);
    expect(s.kept[1]?.preview.buffer).not.toBe(big.buffer);
    expect(s.kept[1]?.preview.buffer.byteLength).toBeLessThan(big.length);
  });

  it('keeps no body for a request refused for its size', () => {
    const s = sink();
    new RefusalKeeper(s, new Set()).keep(facts({ code: 'payload_too_large', body: [Buffer.from('x'.repeat(100))] }));
    expect(s.kept[0]).toMatchObject({ status: 413, size: 10 });
    expect(s.kept[0]?.preview.length).toBe(0);
  });

  it('when the sink has no room, counts the refusal dropped without building it', () => {
    const s = sink(1);
    const keeper = new RefusalKeeper(s, new Set());
    keeper.keep(facts());
    expect(keeper.hasRoom()).toBe(false);
    keeper.keep(facts());
    keeper.keep(facts());
    expect(s.kept).toHaveLength(1);
    expect(s.dropped).toBe(2);
  });
});
