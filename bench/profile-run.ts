import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { categoryTable } from './profile-categories.js';
import { summarizeProfiles } from './profile-summary.js';

/**
 * `npm run bench:profile`: the bench's Reception case under `node
 * --cpu-prof`, one round per body size (BENCH_PROFILE_SIZES, default 1 KiB,
 * 64 KiB and 1 MiB), each summarized as where the main thread's time went
 * per delivery (bench/profile-categories.ts) and its top functions.
 * BENCH_PROFILE_CASE picks the case (`reception durability=full$`),
 * BENCH_PROFILE_DIR keeps the profiles (default /tmp/reception-profile);
 * other BENCH_* settings pass through to the bench (BENCH_SECONDS...).
 */

const RUN = fileURLToPath(new URL('./run.js', import.meta.url));
const sizes = (process.env.BENCH_PROFILE_SIZES ?? '1024,65536,1048576').split(',').map((s) => Number(s.trim()));
const benchCase = process.env.BENCH_PROFILE_CASE ?? 'reception durability=full$';
const outDir = process.env.BENCH_PROFILE_DIR ?? '/tmp/reception-profile';

const slug = (name: string): string =>
  name
    .replace(/\$$/, '')
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();

function runBench(env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
}

async function main(): Promise<void> {
  const report: string[] = [];
  for (const size of sizes) {
    if (!Number.isInteger(size) || size < 64) throw new Error(`BENCH_PROFILE_SIZES: "${size}" is no body size in bytes`);
    const profileDir = join(outDir, String(size));
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
    const out = await runBench({
      BENCH_ROUNDS: '1',
      BENCH_FORWARD_ROUNDS: '0',
      BENCH_KEEP: '1',
      BENCH_CASES: benchCase,
      BENCH_BODY_BYTES: String(size),
      BENCH_CPU_PROF: profileDir,
    });
    const workDir = /work dir (\S+)/.exec(out)?.[1];
    const line = out.split('\n').find((l) => l.startsWith('bench: ') && l.includes(' req/s'));
    if (workDir === undefined) throw new Error(`the bench printed no work dir:\n${out}`);
    const caseDir = slug(benchCase);
    const log = readFileSync(join(workDir, caseDir, 'stdout.log'), 'utf8');
    const deliveries = log.split('\n').filter((l) => l.includes('"msg":"webhook"') && l.includes('"status":200')).length;
    const unit = size >= 256 * 1024 ? 'ms' : 'µs';
    report.push(
      `### ${size} bytes per body`,
      '',
      line ?? '(no result line)',
      '',
      categoryTable(join(profileDir, caseDir), deliveries, unit),
      summarizeProfiles(join(profileDir, caseDir), 15),
    );
    rmSync(workDir, { recursive: true, force: true });
  }
  process.stdout.write(`\n${report.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:profile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
