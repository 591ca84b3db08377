import { parentPort } from 'node:worker_threads';
import { prepareTransformEngine } from './quickjs-engine.js';
import { Sandbox, type SandboxRun } from './sandbox.js';
import type { WorkerJob, WorkerAnswer } from './transform-pool.js';

/**
 * A thread of the transform pool (transform-pool.ts): runs one job at a time,
 * and keeps the sandbox of each transform version it has run, so that the
 * next run of that version reuses its context. The least recently used are
 * freed beyond MAX_KEPT (a reload leaves the old versions behind).
 */
const MAX_KEPT = 64;
const kept = new Map<string, Sandbox>();

function sandboxFor(job: WorkerJob): Sandbox {
  const key = `${job.name}\u0000${job.version}\u0000${job.limits.timeoutMs}\u0000${job.limits.memoryMb}`;
  let sandbox = kept.get(key);
  if (sandbox === undefined) {
    sandbox = Sandbox.compile(job.name, job.code, job.limits);
    if (kept.size >= MAX_KEPT) {
      const [oldest] = kept;
      if (oldest !== undefined) {
        kept.delete(oldest[0]);
        oldest[1].dispose();
      }
    }
  } else kept.delete(key);
  kept.set(key, sandbox);
  return sandbox;
}

/** Runs one job now (the engine is loaded). */
function run(job: WorkerJob): SandboxRun {
  const started = performance.now();
  let sandbox: Sandbox;
  try {
    sandbox = sandboxFor(job);
  } catch (error) {
    // The config check compiled it already: only a limit reached at load time gets here.
    return { error: (error as Error).message, logs: [], durationMs: performance.now() - started };
  }
  return sandbox.run(job.eventJson);
}

function answer(job: WorkerJob): void {
  parentPort?.postMessage({ id: job.id, result: run(job) } satisfies WorkerAnswer);
}

/**
 * Each job is run and answered in its own message event, synchronously: an
 * `await` per job would leave every answer of a batch of messages behind the
 * last job's run. Jobs that come before the engine is loaded wait for it.
 */
const waiting: WorkerJob[] = [];
let loaded = false;
parentPort?.on('message', (job: WorkerJob) => {
  if (loaded) answer(job);
  else waiting.push(job);
});
// The engine first (a few hundred milliseconds): the pool counts a job's time from here.
void prepareTransformEngine().then(() => {
  loaded = true;
  parentPort?.postMessage({ ready: true } satisfies WorkerAnswer);
  for (const job of waiting.splice(0)) answer(job);
});
