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

async function run(job: WorkerJob): Promise<SandboxRun> {
  await prepareTransformEngine();
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

parentPort?.on('message', (job: WorkerJob) => {
  void run(job).then((result) => parentPort?.postMessage({ id: job.id, result } satisfies WorkerAnswer));
});
