import { Worker } from 'node:worker_threads';
import type { SandboxRun } from './sandbox.js';
import type { TransformDefinition } from './transforms.js';

/** What the pool sends a thread: one run of one transform version. */
export interface WorkerJob extends TransformDefinition {
  id: number;
  eventJson: string;
}

/** What a thread sends: that its engine is loaded (once), or the answer to a job. */
export type WorkerAnswer = { ready: true } | { id: number; result: SandboxRun };

/** Past its deadline by this much, a thread that has not answered is stopped and replaced. */
export const STUCK_GRACE_MS = 5000;

interface Pending {
  resolve: (run: SandboxRun) => void;
  timer: NodeJS.Timeout;
  started: number;
  /** How long the thread may take over this job once it is the thread's oldest. */
  allowedMs: number;
}

interface Thread {
  worker: Worker;
  /** In the order sent: a thread runs its jobs one at a time, in that order. */
  pending: Map<number, Pending>;
  /** When the thread last answered, or was last given a job while idle, or became ready. */
  lastProgress: number;
  /** Its engine is loaded (until then, its time is not counted against a job). */
  ready: boolean;
}

/**
 * The threads that run transforms (docs/decisions/transform-sandbox.md): a
 * transform never runs on the event loop, so one that loops until its
 * deadline delays no request. Threads start at the first run (a server
 * without transforms starts none) and do not keep the process alive; a job
 * goes to the thread with the fewest jobs. A thread that dies, or does not
 * answer well past the job's deadline, is replaced, and its jobs answer an
 * error.
 */
export class TransformPool {
  private readonly threads: Array<Thread | undefined>;
  private nextId = 1;
  private closed = false;

  constructor(
    readonly size = 2,
    private readonly stuckGraceMs = STUCK_GRACE_MS,
  ) {
    this.threads = Array.from({ length: Math.max(1, size) }, () => undefined);
  }

  /** Runs a transform on the event (JSON text); never rejects. */
  run(transform: TransformDefinition, eventJson: string): Promise<SandboxRun> {
    if (this.closed) return Promise.resolve({ error: 'the transform pool is closed', logs: [], durationMs: 0 });
    const thread = this.leastBusy();
    const id = this.nextId++;
    return new Promise<SandboxRun>((resolve) => {
      const allowedMs = transform.limits.timeoutMs + this.stuckGraceMs;
      if (thread.pending.size === 0 && thread.ready) thread.lastProgress = performance.now();
      const timer = setTimeout(() => this.check(thread, id), allowedMs);
      timer.unref();
      thread.pending.set(id, { resolve, timer, started: performance.now(), allowedMs });
      const job: WorkerJob = { id, ...transform, eventJson };
      thread.worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    await Promise.all(
      threads.map(async (thread) => {
        if (thread === undefined) return;
        this.fail(thread, 'the transform pool closed');
        await thread.worker.terminate();
      }),
    );
  }

  private leastBusy(): Thread {
    let best: Thread | undefined;
    for (let index = 0; index < this.threads.length; index++) {
      const thread = this.threads[index] ?? this.start(index);
      if (best === undefined || thread.pending.size < best.pending.size) best = thread;
      if (thread.pending.size === 0) break;
    }
    return best ?? this.start(0);
  }

  private start(index: number): Thread {
    const worker = new Worker(workerUrl());
    worker.unref();
    const thread: Thread = { worker, pending: new Map(), lastProgress: performance.now(), ready: false };
    this.threads[index] = thread;
    worker.on('message', (answer: WorkerAnswer) => {
      if ('ready' in answer) {
        thread.ready = true;
        thread.lastProgress = performance.now();
        return;
      }
      const { id, result } = answer;
      const pending = thread.pending.get(id);
      if (pending === undefined) return;
      thread.pending.delete(id);
      thread.lastProgress = performance.now();
      clearTimeout(pending.timer);
      pending.resolve(result);
    });
    worker.on('error', (error) => this.replace(thread, `the transform thread failed: ${error.message}`));
    worker.on('exit', (code) => this.replace(thread, `the transform thread ended (${code})`));
    return thread;
  }

  /**
   * A job's time is up: when it is the thread's oldest and the thread has not
   * answered anything for that long, the thread is stuck: it is stopped (every
   * job on it fails) and replaced at the next run. A job still waiting behind
   * others is given its time again (a queue is not a stuck thread).
   */
  private check(thread: Thread, id: number): void {
    const pending = thread.pending.get(id);
    if (pending === undefined) return;
    const [oldest] = thread.pending.keys();
    const waited = performance.now() - thread.lastProgress;
    if (thread.ready && oldest === id && waited >= pending.allowedMs) {
      this.replace(thread, 'the transform thread did not answer past the deadline and was stopped');
      void thread.worker.terminate();
      return;
    }
    const again = thread.ready && oldest === id ? Math.max(1, pending.allowedMs - waited) : pending.allowedMs;
    pending.timer = setTimeout(() => this.check(thread, id), again);
    pending.timer.unref();
  }

  private replace(thread: Thread, why: string): void {
    const index = this.threads.indexOf(thread);
    if (index >= 0) this.threads[index] = undefined;
    this.fail(thread, why);
  }

  private fail(thread: Thread, why: string): void {
    for (const [id, pending] of thread.pending) {
      thread.pending.delete(id);
      clearTimeout(pending.timer);
      pending.resolve({ error: why, logs: [], durationMs: performance.now() - pending.started });
    }
  }
}

/**
 * The thread's script, compiled beside this module. Tests run this module
 * from its TypeScript source, where there is no compiled sibling: they use
 * the build in dist/ (`npm test` builds first).
 */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL('../../dist/src/transforms/transform-worker.js', here)
    : new URL('./transform-worker.js', here);
}
