import { Worker } from 'node:worker_threads';
import { ConfigFileError } from './source-config.js';
import type { ConfigFile } from './source-config-schema.js';
import type { LocatedProblem } from './yaml-problems.js';

/** What the reading thread answers: the validated file, the problems that refuse it, or an error of its own. */
export type ConfigRead =
  { config: ConfigFile } | { refused: { located: LocatedProblem[]; summary: string } } | { failed: string };

/** A read of the config file under way on its own thread. */
export interface ConfigReading {
  /** The validated file; a ConfigFileError (the same as `loadConfigFile` throws) when it does not load. */
  readonly result: Promise<ConfigFile>;
  /** Stops the thread (a later read supersedes this one): `result` then rejects. */
  cancel(): void;
}

/**
 * `loadConfigFile` on a worker thread, so that a large file (a route filter
 * with a list of 200,000 values takes the YAML parser seconds) never holds
 * up the event loop: the thread reads, parses and validates, and hands back
 * plain data. The thread's script is compiled beside this module
 * (dist/src/config/config-reader-worker.js).
 */
export function readConfigFileOffThread(file: string): ConfigReading {
  const worker = new Worker(new URL('./config-reader-worker.js', import.meta.url), { workerData: file });
  // A reload under way never keeps the process from exiting.
  worker.unref();
  const result = new Promise<ConfigFile>((resolve, reject) => {
    worker.once('message', (read: ConfigRead) => {
      if ('config' in read) resolve(read.config);
      else if ('refused' in read) reject(new ConfigFileError(file, read.refused.located, read.refused.summary));
      else reject(new Error(read.failed));
    });
    worker.once('error', reject);
    // After a message this changes nothing; without one, the thread was stopped or died.
    worker.once('exit', (code) => reject(new Error(`the config reading thread ended (${code}) without an answer`)));
  });
  return { result, cancel: () => void worker.terminate() };
}
