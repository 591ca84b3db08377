import { describe, expect, it } from 'vitest';
import { RecentFrames, type Frame } from '../../../src/stream/recent-frames.js';

const frame = (seq: number, source = 'a', bytes = 10): Frame => ({ seq, source, bytes: Buffer.alloc(bytes, 0x78) });

describe('RecentFrames', () => {
  it('holds every frame after coveredAfter, and gives those after a seq, of a source', () => {
    const recent = new RecentFrames(10, 100, 1_000_000);
    for (let seq = 11; seq <= 20; seq++) recent.append(frame(seq, seq % 2 === 0 ? 'even' : 'odd'));
    expect(recent.after(15, 100)?.frames.map((f) => f.seq)).toEqual([16, 17, 18, 19, 20]);
    expect(recent.after(15, 100, 'even')).toEqual({ frames: [16, 18, 20].map((seq) => frame(seq, 'even')), scannedTo: 20 });
    expect(recent.after(15, 2)?.frames.map((f) => f.seq)).toEqual([16, 17]);
    expect(recent.after(9, 100)).toBeUndefined();
  });

  it('lets go of dropped frames: none stays referenced past the caps or a release', () => {
    const recent = new RecentFrames(0, 5, 1_000_000);
    for (let seq = 1; seq <= 600; seq++) recent.append(frame(seq));
    expect(recent.size).toBe(5);
    expect(recent.referenced).toBe(5);
    expect(recent.coveredAfter).toBe(595);
    recent.releaseThrough(598);
    expect(recent.size).toBe(2);
    expect(recent.referenced).toBe(2);
    const bytes = new RecentFrames(0, 1000, 100);
    for (let seq = 1; seq <= 50; seq++) bytes.append(frame(seq, 'a', 30));
    expect(bytes.size).toBe(3);
    expect(bytes.referenced).toBe(3);
  });
});
