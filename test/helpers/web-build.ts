import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WEB = join(ROOT, 'web');
const BUILT = join(WEB, 'dist', 'index.html');
const LOCK = join(tmpdir(), `reception-web-build-${Buffer.from(ROOT).toString('base64url').slice(-40)}.lock`);

/** The page's own files, and the pure modules of src/ that the page bundles too. */
function newestSourceMs(): number {
  const files = [
    join(WEB, 'index.html'),
    join(WEB, 'vite.config.ts'),
    ...readdirSync(join(WEB, 'src')).map((f) => join(WEB, 'src', f)),
    ...readdirSync(join(ROOT, 'src', 'platform', 'text')).map((f) => join(ROOT, 'src', 'platform', 'text', f)),
    join(ROOT, 'src', 'verify', 'failure-text.ts'),
  ];
  return Math.max(...files.map((f) => statSync(f).mtimeMs));
}

function isFresh(): boolean {
  return existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestSourceMs();
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Makes sure web/dist holds a build of the current web/ sources (`npm test`
 * builds first; this covers `npx vitest run test/e2e` after an edit). Test
 * files run in parallel processes, so one builds under a lock directory while
 * the others wait.
 */
export async function ensureWebBuilt(): Promise<void> {
  if (isFresh()) return;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`waited too long for the web build lock ${LOCK}`);
      // A lock left by a killed run is taken over after two minutes.
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 120_000) rmSync(LOCK, { recursive: true, force: true });
      await sleep(200);
    }
  }
  try {
    if (isFresh()) return;
    const { build } = await import('vite');
    await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: 'warn' });
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
