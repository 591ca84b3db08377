// tsc compiles TypeScript only: copy the SQL migrations beside the compiled store.
// The folder is emptied first: a migration renamed or removed in src/ must not
// linger in dist/ (a stale copy under its old number would be applied again).
import { chmodSync, cpSync, rmSync } from 'node:fs';

for (const backend of ['sqlite', 'postgres']) {
  const target = `dist/src/platform/db/${backend}/migrations`;
  rmSync(target, { recursive: true, force: true });
  cpSync(`src/platform/db/${backend}/migrations`, target, { recursive: true });
}

// The checkpoint thread's script is plain JavaScript, not compiled (see src/platform/db/sqlite/checkpointer.ts).
cpSync('src/platform/db/sqlite/checkpoint-worker.mjs', 'dist/src/platform/db/sqlite/checkpoint-worker.mjs');

// The package's command (package.json "bin"), runnable as ./dist/src/cli/main.js too: tsc writes it 0644.
chmodSync('dist/src/cli/main.js', 0o755);
