import { getQuickJS, type QuickJSWASMModule } from 'quickjs-emscripten';

/**
 * The QuickJS engine (WebAssembly), loaded once per thread and only where a
 * transform is compiled or run: loading it takes a few hundred
 * milliseconds, which the command line's other commands never pay
 * (docs/decisions/transform-sandbox.md).
 */
let loaded: QuickJSWASMModule | undefined;
let loading: Promise<QuickJSWASMModule> | undefined;

/** Loads the engine (once); `transformEngine()` answers it afterwards. */
export async function prepareTransformEngine(): Promise<QuickJSWASMModule> {
  loading ??= getQuickJS().then((engine) => (loaded = engine));
  return loading;
}

/** The engine, which `prepareTransformEngine()` must have loaded first (a config with transforms is checked synchronously). */
export function transformEngine(): QuickJSWASMModule {
  if (loaded === undefined) throw new Error('the transform engine is not loaded: await prepareTransformEngine() first');
  return loaded;
}
