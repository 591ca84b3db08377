import { Worker } from 'node:worker_threads';
import { prepareLongLists } from './route-filter.js';
import { ConfigFileError } from './source-config.js';
import type { ConfigFile } from './source-config-schema.js';
import type { LocatedProblem } from './yaml-problems.js';

/** What the reading thread answers: the validated file, the problems that refuse it, or an error of its own. */
export type ConfigRead =
  { config: ConfigFile } | { refused: { located: LocatedProblem[]; summary: string } } | { failed: string };

/**
 * `loadConfigFile` on a worker thread, so that a large file (a route filter
 * with a list of 200,000 values takes the YAML parser seconds) never holds
 * up the event loop: the thread reads, parses and validates, and hands back
 * plain data. `result` is the validated file, or rejects with the
 * ConfigFileError that `loadConfigFile` throws; `cancel` stops the thread
 * (`result` then rejects). The thread's script is compiled beside this module
 * (dist/src/config/config-reader-worker.js).
 */
export function readConfigFileOffThread(file: string): Reading<ConfigFile> {
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
  // What building the rules would spend in one go on long filter lists is spent here, a little per turn.
  const prepared = result.then(async (config) => {
    await prepareLongLists(routeFilters(config));
    return config;
  });
  return { result: prepared, cancel: () => void worker.terminate() };
}

/** Every route filter of the file. */
function routeFilters(config: ConfigFile): unknown[] {
  return Object.values(config.sources ?? {}).flatMap((source) => (source.forward ?? []).map((route) => route.filter));
}

/** A read under way that can be stopped. */
export interface Reading<T> {
  readonly result: Promise<T>;
  cancel(): void;
}

/**
 * Reads of which only the latest counts: starting one stops the one under
 * way, and the outcome of a read that a later one superseded is dropped, so
 * an older file is never applied after a newer one, whichever read ends
 * first.
 */
export class LatestReads<T> {
  private latest = 0;
  private reading: Reading<T> | undefined;

  constructor(
    private readonly begin: () => Reading<T>,
    private readonly settle: (outcome: PromiseSettledResult<T>) => void,
  ) {}

  /** Starts a read; true when it stopped one under way. */
  start(): boolean {
    const superseded = this.reading !== undefined;
    this.reading?.cancel();
    this.latest += 1;
    const generation = this.latest;
    const reading = this.begin();
    this.reading = reading;
    reading.result.then(
      (value) => this.done(generation, { status: 'fulfilled', value }),
      (reason: unknown) => this.done(generation, { status: 'rejected', reason }),
    );
    return superseded;
  }

  private done(generation: number, outcome: PromiseSettledResult<T>): void {
    if (generation !== this.latest) return;
    this.reading = undefined;
    this.settle(outcome);
  }
}
