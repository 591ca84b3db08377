// Fails when the folders directly under src/ import each other in a circle: imports between
// folders point one way, so that a folder can be read without the ones that use it (docs/development.md).
// Run by `npm run lint`; test/unit/folder-cycles.test.ts shows it failing on a cycle.
// A folder is the first path segment under src/; files directly in src/ are "(root)".
// Type-only imports count too: a circle of types is still a circle for a reader.
// Usage: node scripts/check-folder-cycles.mjs [srcDir] [--graph]
//
// Why not a tool: eslint-plugin-import's import/no-cycle sees files, not folders.
// dependency-cruiser 18's `scope: 'folder'` rules (read in its
// src/analyze/derive/folders/, not run) count a module in its directory and every
// parent, dropping edges inside a folder, and name a dependency by its own
// directory: src/ then holds every module and has no edge to its subfolders, so
// a root file in a cycle (http/ -> src/errors.ts -> ... -> http/) goes unseen, and
// a cycle through a nested folder (a/x.ts -> b/, b/ -> a/sub/z.ts) reads as
// src/a -> src/b -> src/a/sub, no circle. Folders here are the first level.
import process from 'node:process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    // A feature's contract tests (its contract/ folder) use the whole app to test one part: not part of the house.
    if (statSync(path).isDirectory()) {
      if (name !== 'contract') out.push(...tsFiles(path));
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function folderOf(srcDir, file) {
  const parts = relative(srcDir, file).split(sep);
  return parts.length === 1 ? '(root)' : parts[0];
}

/** Folder edges of src/: Map<from, Map<to, [file, specifier][]>>. */
export function folderGraph(srcDir) {
  const edges = new Map();
  for (const file of tsFiles(srcDir)) {
    const from = folderOf(srcDir, file);
    const text = readFileSync(file, 'utf8');
    // TypeScript's own scanner lists every import, export-from, type-only and dynamic import.
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier);
      if (relative(srcDir, target).startsWith('..')) continue;
      const to = folderOf(srcDir, target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const byTarget = edges.get(from);
      if (!byTarget.has(to)) byTarget.set(to, []);
      byTarget.get(to).push([relative(srcDir, file), specifier]);
    }
  }
  return edges;
}

/** Strongly connected groups of more than one folder (Tarjan). */
export function folderCycles(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  let next = 0;
  const nodes = new Set(edges.keys());
  for (const targets of edges.values()) for (const to of targets.keys()) nodes.add(to);
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node), index.get(to)));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node);
  return groups;
}

/** Lines that explain each cycle: every edge inside a group, with one example import. */
export function describeCycles(edges, groups) {
  const lines = [];
  for (const group of groups) {
    lines.push(`folder cycle: ${group.join(', ')}`);
    for (const from of group) {
      for (const [to, uses] of edges.get(from) ?? []) {
        if (!group.includes(to)) continue;
        const [file, specifier] = uses[0];
        lines.push(`  ${from} -> ${to} (${uses.length} import${uses.length === 1 ? '' : 's'}, e.g. ${file}: '${specifier}')`);
      }
    }
  }
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dirArg = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const srcDir = resolve(dirArg ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src'));
  const edges = folderGraph(srcDir);
  const groups = folderCycles(edges);
  if (process.argv.includes('--graph')) {
    for (const [from, targets] of [...edges].sort())
      process.stdout.write(`${from} -> ${[...targets.keys()].sort().join(', ')}\n`);
  }
  if (groups.length > 0) {
    process.stderr.write(`${describeCycles(edges, groups).join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`no folder-level import cycles in ${relative(process.cwd(), srcDir) || '.'}\n`);
}
