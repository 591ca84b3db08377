// The quick build that `npm start` runs when the build is stale: TypeScript's own transpiler, one file
// at a time (`ts.transpileModule`, what tsx and ts-node's transpile-only mode do), with no type check.
// It writes what `tsc -p tsconfig.json` writes (dist/src/**.js with source maps), in a few seconds
// instead of the 20 to 70 s that the type-checking build takes on a 2-core machine (it reads every
// type of every dependency first). The code compiles file by file (`--isolatedModules` reports
// nothing, and tsconfig.json's `isolatedModules` keeps it so); types are checked by `npm run build` and `npm run lint`.
// Usage: node scripts/transpile.mjs [--root DIR]
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import ts from 'typescript';

/** The files tsconfig.json compiles: src/**.ts but contract suites and tests. */
export function sources(root) {
  const found = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'contract') visit(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
        found.push(path);
      }
    }
  };
  visit(join(root, 'src'));
  return found;
}

/** Transpile every source under `root` into tsconfig.json's outDir (or `outDir`), with its compiler options. */
export function transpile(root, outDir = undefined) {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  if (config.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const { options } = ts.convertCompilerOptionsFromJson(config.config.compilerOptions, root);
  const out = outDir ?? options.outDir ?? join(root, 'dist');
  rmSync(join(out, 'src'), { recursive: true, force: true });
  const files = sources(root);
  for (const file of files) {
    const rel = relative(root, file);
    const target = join(out, rel.replace(/\.ts$/, '.js'));
    const { outputText, sourceMapText, diagnostics } = ts.transpileModule(readFileSync(file, 'utf8'), {
      // ES modules, as tsc writes them for this package ("type": "module"): one file alone cannot
      // know the package type that NodeNext reads, so it is said here.
      compilerOptions: {
        ...options,
        module: ts.ModuleKind.ES2022,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        isolatedModules: true,
      },
      fileName: file,
      reportDiagnostics: true,
    });
    const errors = (diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) {
      const first = ts.flattenDiagnosticMessageText(errors[0].messageText, '\n');
      throw new Error(`${rel}: ${first}`);
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
    if (sourceMapText !== undefined) writeFileSync(`${target}.map`, sourceMapText);
  }
  return files.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--root');
  const root = at === -1 ? fileURLToPath(new URL('..', import.meta.url)) : (process.argv[at + 1] ?? '.');
  const started = Date.now();
  const count = transpile(root);
  process.stderr.write(`transpiled ${count} files into dist/ in ${Date.now() - started} ms (types unchecked)\n`);
}
