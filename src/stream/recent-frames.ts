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

/** A run's frames of one source (or all), joined: what a reader at the run's start is sent in one write. */
export interface JoinedRun {
  /** The frames, one after another; empty when none is of the reader's source. */
  bytes: Buffer;
  /** The seq of the last frame in `bytes` (undefined when it is empty). */
  lastSent: number | undefined;
  /** The seq of the run's last frame: the reader has gone past it. */
  scannedTo: number;
}

/** Frames appended together (one read of the store), held as one Buffer that they are views into. */
class Run {
  private readonly bySource = new Map<string, JoinedRun>();
  readonly all: JoinedRun;

  constructor(
    /** The seq before the run's first frame. */
    readonly afterSeq: number,
    private readonly frames: readonly Frame[],
    joined: Buffer,
  ) {
    const last = frames[frames.length - 1] as Frame;
    this.all = { bytes: joined, lastSent: last.seq, scannedTo: last.seq };
  }

  /** The frames of `source` joined, once for every reader of that source. */
  of(source: string): JoinedRun {
    let joined = this.bySource.get(source);
    if (joined === undefined) {
      const mine = this.frames.filter((frame) => frame.source === source);
      joined = {
        bytes: mine.length === this.frames.length ? this.all.bytes : Buffer.concat(mine.map((frame) => frame.bytes)),
        lastSent: mine[mine.length - 1]?.seq,
        scannedTo: this.all.scannedTo,
      };
      this.bySource.set(source, joined);
    }
    return joined;
  }
}

/** Runs larger than this are not joined: their frames are sent one by one, and leave one by one. */
const JOIN_MAX_BYTES = 256 * 1024;

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
  /** Joined runs, oldest first; one whose first frame has left is no longer given. */
  private runs: Run[] = [];
  private readonly runByStart = new Map<number, Run>();

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

  /**
   * Adds the frames of one read, in seq order. When they are small they are
   * joined into one Buffer (the frames become views into it), so that a
   * reader at their start is sent all of them in one write (see `runAfter`).
   */
  appendRun(frames: readonly Frame[]): void {
    const first = frames[0];
    if (first === undefined) return;
    const afterSeq = this.last;
    const bytes = frames.reduce((sum, frame) => sum + frame.bytes.length, 0);
    if (frames.length === 1 || bytes > JOIN_MAX_BYTES) {
      for (const frame of frames) this.append(frame);
      return;
    }
    const joined = Buffer.concat(
      frames.map((frame) => frame.bytes),
      bytes,
    );
    let offset = 0;
    const views = frames.map((frame) => {
      const view = { seq: frame.seq, source: frame.source, bytes: joined.subarray(offset, offset + frame.bytes.length) };
      offset += frame.bytes.length;
      return view;
    });
    for (const view of views) this.append(view);
    if (afterSeq < this.covered) return;
    const run = new Run(afterSeq, views, joined);
    this.runs.push(run);
    this.runByStart.set(afterSeq, run);
  }

  /**
   * The frames of the joined run that starts right after `seq` (of `source`
   * only, when given), all in one Buffer shared by every reader there;
   * undefined when no such run is held (then `after`).
   */
  runAfter(seq: number, source?: string): JoinedRun | undefined {
    if (seq < this.covered) return undefined;
    const run = this.runByStart.get(seq);
    if (run === undefined) return undefined;
    return source === undefined ? run.all : run.of(source);
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
    // A run whose first frame left is no longer whole.
    while (this.runs.length > 0 && (this.runs[0] as Run).afterSeq < this.covered) {
      this.runByStart.delete((this.runs.shift() as Run).afterSeq);
    }
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
  }
}
