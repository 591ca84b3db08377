import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import ts from 'typescript';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ENTRY = 'inbox/sqlite-store.ts';

/**
 * Compiles the SQLite store from `src/` (not `dist/`, which may be stale),
 * with every module it imports at run time, into `dir`, so that worker
 * threads, which cannot load TypeScript, run the code under test.
 */
function compileStore(dir: string): string {
  const require = createRequire(import.meta.url);
  // The compiled driver module sits outside the project: it names the
  // packages by their resolved paths instead of their names.
  const driverPaths = (text: string): string =>
    ['better-sqlite3-napi', 'better-sqlite3'].reduce(
      (out, name) => out.replaceAll(`'${name}'`, JSON.stringify(require.resolve(name))),
      text,
    );
  const todo = [ENTRY];
  const done = new Set<string>();
  for (let module = todo.pop(); module !== undefined; module = todo.pop()) {
    if (done.has(module)) continue;
    done.add(module);
    const source = readFileSync(join(SRC, module), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    });
    for (const [, specifier] of outputText.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) {
      if (specifier !== undefined) todo.push(join(dirname(module), `${specifier}.ts`));
    }
    const out = join(dir, module.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, driverPaths(outputText));
  }
  cpSync(join(SRC, 'platform/db/sqlite/migrations'), join(dir, 'platform/db/sqlite/migrations'), { recursive: true });
  return pathToFileURL(join(dir, ENTRY.replace(/\.ts$/, '.js'))).href;
}

const WORKER = `
import { workerData, parentPort } from 'node:worker_threads';
const { SqliteStore } = await import(workerData.storeModule);
const gate = new Int32Array(workerData.gate);
// Wait until every worker is here, then all open the store at once.
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 0) < workerData.count) Atomics.wait(gate, 0, Atomics.load(gate, 0), 5);
try {
  const store = new SqliteStore({ file: workerData.file, durability: 'full' });
  const [outcome] = await store.append([{
    id: 'worker-' + workerData.index, source: 'workers', receivedAt: Date.now(), method: 'POST', query: '',
    contentType: 'application/json', remoteAddress: '127.0.0.1', headers: [], raw: Buffer.from('{}'),
    verification: { status: 'none' }, dedupKey: null,
  }]);
  await store.close();
  parentPort.postMessage({ ok: true, seq: outcome.seq });
} catch (error) {
  parentPort.postMessage({ ok: false, error: String(error && error.stack || error) });
}
`;

export type WorkerResult = { ok: true; seq: number } | { ok: false; error: string };

/**
 * Opens `count` SqliteStores on `file` at the same moment, one per worker
 * thread, and appends one delivery through each.
 */
export async function openStoresAtOnce(dir: string, file: string, count: number): Promise<WorkerResult[]> {
  const storeModule = compileStore(join(dir, 'compiled'));
  const workerFile = join(dir, 'compiled', 'open-store-worker.mjs');
  writeFileSync(workerFile, WORKER);
  const gate = new SharedArrayBuffer(4);
  return Promise.all(
    Array.from(
      { length: count },
      (_, index) =>
        new Promise<WorkerResult>((resolve, reject) => {
          const worker = new Worker(workerFile, { workerData: { storeModule, file, gate, count, index } });
          worker.once('message', (result: WorkerResult) => {
            resolve(result);
            void worker.terminate();
          });
          worker.once('error', reject);
        }),
    ),
  );
}
