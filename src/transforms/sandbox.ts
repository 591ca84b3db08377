import { shouldInterruptAfterDeadline, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten';
import { transformEngine } from './quickjs-engine.js';
import { checkedOutput, type TransformOutput } from './transform-output.js';

/** A transform's limits (CONTRACT 10): per run, and for its runtime's heap. */
export interface TransformLimits {
  timeoutMs: number;
  memoryMb: number;
}

export const DEFAULT_LIMITS: TransformLimits = { timeoutMs: 50, memoryMb: 16 };

/** The `console.log` lines a run keeps (CONTRACT 10), and how long each may be. */
export const MAX_LOG_LINES = 20;
const MAX_LOG_LINE_CHARS = 2000;
/** The interpreter's stack: deep enough for ordinary code, well inside the WebAssembly stack. */
const STACK_BYTES = 256 * 1024;

/** What one run gave: the output (null: drop), or why it failed; with its logs and how long it took. */
export type SandboxRun =
  { output: TransformOutput | null; logs: string[]; durationMs: number } | { error: string; logs: string[]; durationMs: number };

/** A transform that does not compile, or has no default export function: a config error (CONTRACT 10). */
export class TransformCompileError extends Error {
  constructor(
    message: string,
    /** Where QuickJS reports the problem, when it does (1-based). */
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
    this.name = 'TransformCompileError';
  }
}

/** What the host keeps of one evaluated transform: its context and the handles it calls. */
interface Loaded {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  /** `(fn, input) => fn(parse(input))`, made before the transform's code ran, so that it cannot replace JSON. */
  call: QuickJSHandle;
  /** `(out) => stringify(out)`, likewise. */
  show: QuickJSHandle;
  transform: QuickJSHandle;
  logs: string[];
}

const HELPERS = `({
  call: ((parse) => (fn, input) => fn(parse(input)))(JSON.parse),
  show: ((stringify) => (out) => out === undefined ? undefined : stringify(out))(JSON.stringify),
})`;

/**
 * One transform's code, evaluated as an ES module in a QuickJS runtime of its
 * own (its memory limit, its stack limit, no module loader, so neither
 * `import` nor `import()` loads anything), and called once per run with a
 * deadline (docs/decisions/transform-sandbox.md). The context is reused from
 * run to run; a run stopped by its deadline or its memory limit leaves a
 * context that may be half-way through anything, so the next run starts from
 * a fresh one.
 */
export class Sandbox {
  private loaded: Loaded | undefined;

  private constructor(
    private readonly name: string,
    private readonly code: string,
    readonly limits: TransformLimits,
  ) {}

  /** Evaluates the code; throws TransformCompileError for a syntax error, a failing module or no default export function. */
  static compile(name: string, code: string, limits: TransformLimits = DEFAULT_LIMITS): Sandbox {
    const sandbox = new Sandbox(name, code, limits);
    sandbox.loaded = sandbox.load();
    return sandbox;
  }

  /** Calls the transform with the event (as JSON text, CONTRACT 10 "In"); never throws. */
  run(eventJson: string): SandboxRun {
    const started = performance.now();
    let loaded: Loaded;
    try {
      loaded = this.loaded ?? this.load();
    } catch (error) {
      return { error: (error as Error).message, logs: [], durationMs: since(started) };
    }
    this.loaded = loaded;
    loaded.logs.length = 0;
    let outcome: ReturnType<Sandbox['call']>;
    try {
      outcome = this.call(loaded, eventJson);
    } catch (error) {
      // The host's own stack or the engine gave way: the runtime may be in any state, so it is
      // dropped without freeing it (freeing a broken runtime can abort the engine); rare, and a leak.
      this.loaded = undefined;
      return { error: `the sandbox failed: ${(error as Error).message}`, logs: [...loaded.logs], durationMs: since(started) };
    }
    const logs = [...loaded.logs];
    if ('broken' in outcome) {
      this.dispose();
      return { error: outcome.broken, logs, durationMs: since(started) };
    }
    return { ...outcome, logs, durationMs: since(started) };
  }

  /** Frees the runtime (a later run loads the code again). */
  dispose(): void {
    const loaded = this.loaded;
    this.loaded = undefined;
    if (loaded === undefined) return;
    try {
      for (const handle of [loaded.call, loaded.show, loaded.transform]) handle.dispose();
      loaded.context.dispose();
      loaded.runtime.dispose();
    } catch {
      // A runtime stopped half-way that QuickJS cannot free: dropped (a leak, rare), never thrown at the caller.
    }
  }

  private load(): Loaded {
    const runtime = transformEngine().newRuntime();
    runtime.setMemoryLimit(this.limits.memoryMb * 1024 * 1024);
    runtime.setMaxStackSize(STACK_BYTES);
    const context = runtime.newContext();
    const logs: string[] = [];
    const held: QuickJSHandle[] = [];
    try {
      installConsole(context, logs);
      const helpers = context.unwrapResult(context.evalCode(HELPERS, 'reception-helpers.js', { type: 'global' }));
      held.push(helpers);
      const call = context.getProp(helpers, 'call');
      held.push(call);
      const show = context.getProp(helpers, 'show');
      held.push(show);
      const transform = this.evaluate(context);
      helpers.dispose();
      return { runtime, context, call, show, transform, logs };
    } catch (error) {
      try {
        for (const handle of held) if (handle.alive) handle.dispose();
        context.dispose();
        runtime.dispose();
      } catch {
        // A runtime the host's own stack gave way in cannot always be freed: dropped (a leak, rare).
      }
      throw error;
    }
  }

  /** The module's default export, which must be a function. */
  private evaluate(context: QuickJSContext): QuickJSHandle {
    // The module's own top level runs under the run's deadline too (a loop there is stopped).
    context.runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + this.limits.timeoutMs));
    const result = context.evalCode(this.code, `${this.name}.js`, { type: 'module' });
    if (result.error !== undefined) throw compileError(context, result.error, this.limits);
    // A module with top-level await answers a promise for its exports.
    const stopped = runPendingJobs(context);
    const state = context.getPromiseState(result.value);
    // Not a promise: `state.value` is the very handle.
    if (!(state.type === 'fulfilled' && state.notAPromise === true)) result.value.dispose();
    if (state.type === 'pending') {
      if (stopped !== undefined) throw compileError(context, stopped, this.limits);
      throw new TransformCompileError('the module did not finish evaluating (a top-level await that never settles)');
    }
    stopped?.dispose();
    if (state.type === 'rejected') throw compileError(context, state.error, this.limits);
    const exports = state.value;
    const transform = context.getProp(exports, 'default');
    exports.dispose();
    if (context.typeof(transform) !== 'function') {
      transform.dispose();
      throw new TransformCompileError('no default export function: write `export default function (event) { … }`');
    }
    return transform;
  }

  private call(loaded: Loaded, eventJson: string): { output: TransformOutput | null } | { error: string } | { broken: string } {
    const { context, runtime } = loaded;
    runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + this.limits.timeoutMs));
    const input = context.newString(eventJson);
    const called = context.callFunction(loaded.call, context.undefined, loaded.transform, input);
    input.dispose();
    if (called.error !== undefined) return failure(context, called.error, this.limits);
    const promise = called.value;
    let state = context.getPromiseState(promise);
    // An async transform: its jobs run under the same deadline.
    if (state.type === 'pending') {
      const stopped = runPendingJobs(context);
      state = context.getPromiseState(promise);
      if (stopped !== undefined && state.type === 'pending') {
        promise.dispose();
        return failure(context, stopped, this.limits);
      }
      stopped?.dispose();
    }
    let value: QuickJSHandle;
    if (state.type === 'fulfilled' && state.notAPromise === true) value = promise;
    else {
      promise.dispose();
      if (state.type === 'pending') return { broken: 'the promise the transform returned did not settle' };
      if (state.type === 'rejected') return failure(context, state.error, this.limits);
      value = state.value;
    }
    const shown = context.callFunction(loaded.show, context.undefined, value);
    value.dispose();
    if (shown.error !== undefined) return failure(context, shown.error, this.limits);
    const text = context.typeof(shown.value) === 'string' ? context.getString(shown.value) : undefined;
    shown.value.dispose();
    return checkedOutput(text === undefined ? null : JSON.parse(text));
  }
}

/** Runs the jobs that promises queued; answers what stopped them (the deadline, memory), if anything did. */
function runPendingJobs(context: QuickJSContext): QuickJSHandle | undefined {
  const ran = context.runtime.executePendingJobs();
  return ran.error;
}

/** `console.log` (and its siblings): each call one line, kept while there are fewer than MAX_LOG_LINES. */
function installConsole(context: QuickJSContext, logs: string[]): void {
  const log = context.newFunction('log', (...args) => {
    if (logs.length >= MAX_LOG_LINES) return;
    const line = args
      .map((arg) => (context.typeof(arg) === 'string' ? context.getString(arg) : shownValue(context.dump(arg))))
      .join(' ');
    logs.push(line.length > MAX_LOG_LINE_CHARS ? `${line.slice(0, MAX_LOG_LINE_CHARS)}…` : line);
  });
  const consoleObject = context.newObject();
  for (const method of ['log', 'info', 'warn', 'error', 'debug']) context.setProp(consoleObject, method, log);
  context.setProp(context.global, 'console', consoleObject);
  consoleObject.dispose();
  log.dispose();
}

function shownValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

interface DumpedError {
  name?: unknown;
  message?: unknown;
  stack?: unknown;
  lineNumber?: unknown;
}

/** An error thrown inside the sandbox, in words; `broken` when the deadline or the memory limit stopped it. */
function failure(
  context: QuickJSContext,
  handle: QuickJSHandle,
  limits: TransformLimits,
): { error: string } | { broken: string } {
  const { text, limit } = errorText(context, handle, limits);
  return limit ? { broken: text } : { error: text };
}

function compileError(context: QuickJSContext, handle: QuickJSHandle, limits: TransformLimits): TransformCompileError {
  const dumped = context.dump(handle) as DumpedError | string;
  // The line goes in the error's own field (the config error says where), not in the text.
  const text = errorText(context, handle, limits, dumped).text.replace(/ \(line \d+\)$/, '');
  const at =
    typeof dumped === 'object' && dumped !== null && typeof dumped.stack === 'string' ? /:(\d+):(\d+)/.exec(dumped.stack) : null;
  return at === null ? new TransformCompileError(text) : new TransformCompileError(text, Number(at[1]), Number(at[2]));
}

function errorText(
  context: QuickJSContext,
  handle: QuickJSHandle,
  limits: TransformLimits,
  dumped: DumpedError | string = context.dump(handle) as DumpedError | string,
): { text: string; limit: boolean } {
  if (handle.alive) handle.dispose();
  if (typeof dumped !== 'object' || dumped === null) return { text: `threw ${shownValue(dumped)}`, limit: false };
  const name = typeof dumped.name === 'string' ? dumped.name : 'Error';
  const message = typeof dumped.message === 'string' ? dumped.message : shownValue(dumped);
  if (name === 'InternalError' && message === 'interrupted')
    return { text: `over its time limit (${limits.timeoutMs} ms)`, limit: true };
  if (message === 'out of memory') return { text: `over its memory limit (${limits.memoryMb} MB)`, limit: true };
  const where = typeof dumped.stack === 'string' ? /\((?:[^)]*?):(\d+):(\d+)\)|at [^\s]*:(\d+):(\d+)/.exec(dumped.stack) : null;
  const line = where === null ? '' : ` (line ${where[1] ?? where[3]})`;
  return { text: `${name}: ${message}${line}`, limit: false };
}

function since(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
