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

  it('joins the frames of one read into one Buffer, given whole to a reader at its start, of its source', () => {
    const recent = new RecentFrames(10, 100, 1_000_000);
    const frames = [frame(11, 'a', 3), frame(12, 'b', 4), frame(13, 'a', 5)];
    recent.appendRun(frames);
    const all = recent.runAfter(10);
    expect(all?.bytes).toEqual(Buffer.concat(frames.map((f) => f.bytes)));
    expect(all).toMatchObject({ lastSent: 13, scannedTo: 13 });
    const ofA = recent.runAfter(10, 'a');
    expect(ofA).toMatchObject({ bytes: Buffer.alloc(8, 0x78), lastSent: 13, scannedTo: 13 });
    // The same Buffer for every reader of a source.
    expect(recent.runAfter(10, 'a')?.bytes).toBe(ofA?.bytes);
    expect(recent.runAfter(10, 'c')).toEqual({ bytes: Buffer.alloc(0), lastSent: undefined, scannedTo: 13 });
    // Not at a run's start: frame by frame, as before.
    expect(recent.runAfter(11)).toBeUndefined();
    expect(recent.after(11, 100)?.frames.map((f) => f.seq)).toEqual([12, 13]);
    // A run whose first frame left is not given.
    recent.releaseThrough(11);
    expect(recent.runAfter(10)).toBeUndefined();
  });
});
