import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { attachLongLists, type ListPath } from './long-lists.js';
import { prepareLongLists } from '../forwarding/route-filter.js';
import { ConfigFileError } from './source-config.js';
import type { ConfigFile } from './source-config-schema.js';
import type { LocatedProblem } from './yaml-problems.js';

/** What the reading thread answers: the file is in the parts port, or the problems that refuse it, or an error of its own. */
export type ConfigRead = { inParts: true } | { refused: { located: LocatedProblem[]; summary: string } } | { failed: string };

/** The messages of the parts port: the values of the long lists in order, then the rest of the file and where they go. */
export type ConfigParts = { values: unknown[] } | { config: ConfigFile; paths: ListPath[]; lengths: number[] };

/**
 * `loadConfigFile` on a worker thread, so that a large file (a route filter
 * with a list of 200,000 values takes the YAML parser seconds) never holds
 * up the event loop: the thread reads, parses and validates, and hands back
 * plain data, its long lists in parts taken in one per turn of the event
 * loop (long-lists.ts). `result` is the validated file, or rejects with the
 * ConfigFileError that `loadConfigFile` throws; `cancel` stops the thread
 * (`result` then rejects). The thread's script is compiled beside this module
 * (dist/src/config/config-reader-worker.js).
 */
export function readConfigFileOffThread(file: string): Reading<ConfigFile> {
  const { port1: parts, port2: partsForThread } = new MessageChannel();
  const worker = new Worker(new URL('./config-reader-worker.js', import.meta.url), {
    workerData: { file, parts: partsForThread },
    transferList: [partsForThread],
  });
  // A reload under way never keeps the process from exiting.
  worker.unref();
  let cancelled = false;
  const answer = new Promise<ConfigRead>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    // After the answer this changes nothing; without one, the thread was stopped or died.
    worker.once('exit', (code) => reject(new Error(`the config reading thread ended (${code}) without an answer`)));
  });
  const result = answer.then(async (read) => {
    if ('refused' in read) throw new ConfigFileError(file, read.refused.located, read.refused.summary);
    if ('failed' in read) throw new Error(read.failed);
    const config = await takeParts(parts, () => cancelled);
    // What building the rules would spend in one go on long filter lists is spent here, a little per turn.
    await prepareLongLists(routeFilters(config));
    return config;
  });
  void result.finally(() => parts.close()).catch(() => undefined);
  return {
    result,
    cancel: () => {
      cancelled = true;
      void worker.terminate();
    },
  };
}

/** The file from the parts port, one message per turn of the event loop (all are there: the thread posted them before its answer). */
async function takeParts(parts: MessagePort, cancelled: () => boolean): Promise<ConfigFile> {
  const values: unknown[] = [];
  for (;;) {
    if (cancelled()) throw new Error('the read was stopped');
    const received = receiveMessageOnPort(parts);
    if (received === undefined) throw new Error('the config reading thread sent less than it said');
    const part = received.message as ConfigParts;
    if ('config' in part) {
      let from = 0;
      const lists = part.lengths.map((length) => values.slice(from, (from += length)));
      attachLongLists(part.config, part.paths, lists);
      return part.config;
    }
    for (const value of part.values) values.push(value);
    await nextTurn();
  }
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
