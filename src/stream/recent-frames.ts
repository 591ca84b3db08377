/**
 * One delivery as a Server-Sent Events frame, rendered once for every
 * reader: the same Buffer is written to each, and sockets queue a Buffer
 * by reference, so a hundred readers that have not taken a 5 MiB event
 * yet hold one copy of it, not a hundred (a string is copied per socket).
 */
export interface Frame {
  seq: number;
  source: string;
  bytes: Buffer;
}

/**
 * The newest deliveries as frames, every one with a seq above `coveredAfter`
 * and up to `lastSeq`, in seq order: a reader whose position is in that
 * range takes what follows from here instead of asking the store. Frames
 * leave once every reader has gone past them, or when there are more than
 * `maxFrames` or `maxBytes` of them (a reader left behind reads the store).
 */
export class RecentFrames {
  /** Slots before `head` are emptied as frames leave, so that a dropped frame is not kept alive. */
  private frames: Array<Frame | undefined> = [];
  private head = 0;
  private bytes = 0;
  private covered: number;
  private last: number;

  constructor(
    startSeq: number,
    private readonly maxFrames: number,
    private readonly maxBytes: number,
  ) {
    this.covered = startSeq;
    this.last = startSeq;
  }

  /** Every delivery with a seq above this and up to `lastSeq` is held here. */
  get coveredAfter(): number {
    return this.covered;
  }

  get lastSeq(): number {
    return this.last;
  }

  get size(): number {
    return this.frames.length - this.head;
  }

  /** Frames still referenced by the array; equal to `size` when dropped ones are let go (a check for tests). */
  get referenced(): number {
    return this.frames.reduce((count, frame) => count + (frame === undefined ? 0 : 1), 0);
  }

  /** Adds the next frame; its seq must be above `lastSeq`. */
  append(frame: Frame): void {
    if (frame.seq <= this.last) throw new Error(`frame ${frame.seq} is not after ${this.last}`);
    this.frames.push(frame);
    this.bytes += frame.bytes.length;
    this.last = frame.seq;
    while (this.size > this.maxFrames || this.bytes > this.maxBytes) this.dropFirst();
  }

  /** Lets go of the frames at or below `seq` (every reader is past them). */
  releaseThrough(seq: number): void {
    while (this.size > 0 && (this.frames[this.head] as Frame).seq <= seq) this.dropFirst();
  }

  /**
   * Up to `limit` frames after `seq` (of `source` only, when given), and the
   * seq of the last frame looked at; undefined when frames after `seq` have
   * left already, so that the reader must ask the store.
   */
  after(seq: number, limit: number, source?: string): { frames: Frame[]; scannedTo: number } | undefined {
    if (seq < this.covered) return undefined;
    const frames: Frame[] = [];
    let scannedTo = seq;
    for (let index = this.firstAfter(seq); index < this.frames.length && frames.length < limit; index++) {
      const frame = this.frames[index] as Frame;
      scannedTo = frame.seq;
      if (source === undefined || frame.source === source) frames.push(frame);
    }
    return { frames, scannedTo };
  }

  /** Index of the first frame with a seq above `seq` (binary search: seqs rise). */
  private firstAfter(seq: number): number {
    let low = this.head;
    let high = this.frames.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.frames[middle] as Frame).seq <= seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private dropFirst(): void {
    const first = this.frames[this.head] as Frame;
    this.frames[this.head] = undefined;
    this.head++;
    this.bytes -= first.bytes.length;
    this.covered = first.seq;
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
  }
}
