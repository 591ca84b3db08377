import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// scripts/check-folder-cycles.mjs is what `npm run lint` runs; here it is run
// the same way, on small src/ trees written for each case, and on the real src/.
const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'check-folder-cycles.mjs');
const made: string[] = [];

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'folder-cycles-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(srcDir?: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, srcDir === undefined ? [SCRIPT] : [SCRIPT, srcDir], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

afterEach(() => {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('check-folder-cycles', () => {
  it('passes on the real src/', () => {
    const result = check();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('passes when imports between folders point one way', () => {
    const result = check(
      tree({
        'main.ts': "import { a } from './a/a.js';\n",
        'a/a.ts': "import { b } from '../b/b.js';\nexport const a = b;\n",
        'a/inner/deep.ts': "import { a } from '../a.js';\nexport const deep = a;\n",
        'b/b.ts': 'export const b = 1;\n',
      }),
    );
    expect(result.status).toBe(0);
  });

  it('fails on two folders that import each other, naming both and a file', () => {
    const result = check(
      tree({
        'config/settings.ts': "import type { Rule } from '../receive/rules.js';\nexport type Settings = Rule[];\n",
        'receive/rules.ts':
          "import { type Settings } from '../config/settings.js';\nexport type Rule = string;\nexport type All = Settings;\n",
      }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('folder cycle: config, receive');
    expect(result.stderr).toContain("config -> receive (1 import, e.g. config/settings.ts: '../receive/rules.js')");
  });

  it('counts files directly in src/ as one folder, and sees dynamic and re-exported imports', () => {
    const result = check(
      tree({
        'app.ts': "export { route } from './http/route.js';\n",
        'errors.ts': 'export const code = 1;\n',
        'http/route.ts': "export async function route() { return (await import('../errors.js')).code; }\n",
      }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('folder cycle: (root), http');
  });

  it("leaves out a feature's contract/ folder and *.test.ts files, which use the whole app to test one part", () => {
    const files = {
      'inbox/store.ts': "import type { Outbox } from '../forwarding/outbox.js';\nexport type Store = Outbox;\n",
      'forwarding/outbox.ts': 'export type Outbox = string;\n',
      'forwarding/contract/outbox-contract.ts': "import type { Store } from '../../inbox/store.js';\nexport type S = Store;\n",
      'forwarding/outbox.test.ts': "import type { Store } from '../inbox/store.js';\nexport type T = Store;\n",
    };
    expect(check(tree(files)).status).toBe(0);
    // The same import from a file of the feature itself is a cycle.
    const result = check(
      tree({ ...files, 'forwarding/uses-store.ts': "import type { Store } from '../inbox/store.js';\nexport type U = Store;\n" }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('folder cycle: forwarding, inbox');
  });
});
