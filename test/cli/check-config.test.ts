import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { killAllClis, runCli } from './support/cli.js';

afterEach(killAllClis);
const dir = tempDir();
afterAll(() => dir.remove());

function file(name: string, text: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
}

describe('reception check-config FILE', () => {
  it('accepts a valid file and says what it holds', async () => {
    const path = file('good.yaml', 'strict: true\nsources:\n  gh:\n    verify: { scheme: github, secrets: ["s1", "s2"] }\n  meta:\n    handshake: { type: meta, verifyToken: tok }\n');
    const { code, stdout } = await runCli(['check-config', path]);
    expect(code).toBe(0);
    expect(stdout).toContain('is valid: 2 sources (gh, meta), strict mode on');
  });

  it('refuses an unknown scheme, naming the key, and exits 1', async () => {
    const path = file('bad.json', JSON.stringify({ sources: { pay: { verify: { scheme: 'strype', secrets: ['x'] } } } }));
    const { code, stderr } = await runCli(['check-config', path]);
    expect(code).toBe(1);
    expect(stderr).toContain('sources.pay.verify.scheme: expected one of');
    expect(stderr).toContain('"strype"');
  });

  it('names every bad key of a file with several problems', async () => {
    const path = file('many.yaml', 'sources:\n  a:\n    rateLimit: { requests: 0, perSeconds: 1 }\n  b:\n    handshake: { type: telepathy }\n    colour: blue\n');
    const { code, stderr } = await runCli(['check-config', path]);
    expect(code).toBe(1);
    expect(stderr).toContain('sources.a.rateLimit.requests');
    expect(stderr).toContain('sources.b.handshake.type');
    expect(stderr).toContain('sources.b.colour: unknown key');
  });

  it('reports a missing file, and a missing argument as a usage error', async () => {
    const missing = await runCli(['check-config', join(dir.path, 'nope.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('there is no such file: check the path (ENOENT)');
    const usage = await runCli(['check-config']);
    expect(usage.code).toBe(2);
  });
});
