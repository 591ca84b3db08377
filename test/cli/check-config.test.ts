import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { killAllClis, runCli } from '../helpers/cli.js';

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
    const path = file(
      'good.yaml',
      'strict: true\nsources:\n  gh:\n    verify: { scheme: github, secrets: ["s1", "s2"] }\n  meta:\n    handshake: { type: meta, verifyToken: tok }\n',
    );
    const { code, stdout } = await runCli(['check-config', path]);
    expect(code).toBe(0);
    expect(stdout).toContain('is valid: 2 sources (gh, meta), strict mode on');
  });

  it('compiles the transforms (CONTRACT 10): a valid one is counted, a syntax error is named with its line', async () => {
    writeFileSync(join(dir.path, 'shout.js'), 'export default (e) => ({ body: e.body })\n');
    writeFileSync(join(dir.path, 'broken.js'), '// a comment\nexport default (e) => ({ body: e.body. })\n');
    const good = file('transforms-good.yaml', 'transforms:\n  shout: { file: shout.js }\nsources: {}\n');
    const bad = file('transforms-bad.yaml', 'transforms:\n  shout: { file: broken.js }\nsources: {}\n');
    const [valid, invalid] = await Promise.all([runCli(['check-config', good]), runCli(['check-config', bad])]);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain('1 transform (shout)');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(
      /transforms-bad\.yaml:2:12: transforms\.shout\.file: SyntaxError: .* \(broken\.js line 2, column \d+\)/,
    );
  });

  it('refuses an unknown scheme, naming the key, and exits 1', async () => {
    const path = file('bad.json', JSON.stringify({ sources: { pay: { verify: { scheme: 'strype', secrets: ['x'] } } } }));
    const { code, stderr } = await runCli(['check-config', path]);
    expect(code).toBe(1);
    expect(stderr).toContain('sources.pay.verify.scheme: expected one of');
    expect(stderr).toContain('"strype"');
  });

  it('names every bad key of a file with several problems', async () => {
    const path = file(
      'many.yaml',
      'sources:\n  a:\n    rateLimit: { requests: 0, perSeconds: 1 }\n  b:\n    handshake: { type: telepathy }\n    colour: blue\n',
    );
    const { code, stderr } = await runCli(['check-config', path]);
    expect(code).toBe(1);
    expect(stderr).toContain('sources.a.rateLimit.requests');
    expect(stderr).toContain('sources.b.handshake.type');
    expect(stderr).toContain('sources.b.colour: unknown key');
  });

  it('covers destinations and routes: a valid file says what it forwards, a bad one names each key', async () => {
    const good = file(
      'forward.yaml',
      [
        'destinations:',
        '  app: { url: "https://app.example.com/hooks", timeoutMs: 5000 }',
        '  worker: { pull: true }',
        'sources:',
        '  stripe:',
        '    forward:',
        '      - to: app',
        '        filter: { body: { type: { $startsWith: "invoice." } } }',
        '      - to: worker',
        '',
      ].join('\n'),
    );
    const valid = await runCli(['check-config', good]);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain('is valid: 1 source (stripe), 2 destinations (app, worker) with 2 routes, strict mode off');
    const bad = file(
      'bad-forward.yaml',
      [
        'destinations:',
        '  app: { url: "https://x.example", concurency: 5 }',
        '  ftp: { url: "ftp://x" }',
        '  worker: { pull: true, url: "https://x.example" }',
        '  "bad name": { url: "https://x.example" }',
        '  signed: { url: "https://x.example", sign: { secrets: ["whsec_short"] }, headers: { Host: "x" } }',
        'sources:',
        '  stripe:',
        '    forward:',
        '      - to: ap',
        '        filter: { body: { type: { $regex: "x" } } }',
        '      - { to: worker }',
        '  other:',
        '    forward: [{ to: worker, filtr: {} }]',
        '',
      ].join('\n'),
    );
    const refused = await runCli(['check-config', bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('destinations.app.concurency: unknown key (did you mean "concurrency"');
    expect(refused.stderr).toContain('destinations.ftp.url: not a valid http:// or https:// URL');
    expect(refused.stderr).toContain('destinations.worker.url: a pull destination has no url');
    expect(refused.stderr).toContain('destinations["bad name"]: a destination\'s name is');
    expect(refused.stderr).toContain('destinations.signed.sign.secrets[0]: a Standard Webhooks secret');
    expect(refused.stderr).not.toContain('whsec_short');
    expect(refused.stderr).toContain('destinations.signed.headers.Host: set by Reception itself');
    expect(refused.stderr).toContain('sources.stripe.forward[0].to: there is no destination "ap" (did you mean "app"?)');
    expect(refused.stderr).toContain('sources.stripe.forward[0].filter.body.type.$regex: unknown operator');
    expect(refused.stderr).toContain('sources.other.forward.0.filtr: unknown key (did you mean "filter"');
  });

  it('says "did you mean" for a plural or a longer form of a key (retries: retry), and nothing for an unrelated one', async () => {
    const path = file(
      'near.yaml',
      [
        'destinations:',
        '  app:',
        '    url: "https://app.example.com/hooks"',
        '    retries: { attempts: 3 }',
        '    timeout: 5000',
        '    colour: blue',
        'sources:',
        '  a:',
        '    forwards: [{ to: app }]',
        '',
      ].join('\n'),
    );
    const { code, stderr } = await runCli(['check-config', path]);
    expect(code).toBe(1);
    expect(stderr).toContain('destinations.app.retries: unknown key (did you mean "retry"? see docs/config.md)');
    expect(stderr).toContain('destinations.app.timeout: unknown key (did you mean "timeoutMs"? see docs/config.md)');
    expect(stderr).toContain('sources.a.forwards: unknown key (did you mean "forward"? see docs/config.md)');
    expect(stderr).toContain('destinations.app.colour: unknown key (check the spelling; see docs/config.md)');
  });

  it('warns of each destination that the private-network guard will refuse, naming it and the setting, and still exits 0', async () => {
    const path = file(
      'private.yaml',
      [
        'destinations:',
        '  local: { url: "http://localhost:3000/" }',
        '  dev: { url: "http://api.dev.localhost:8080/hooks" }',
        '  loop: { url: "http://127.0.0.1:3000/hooks" }',
        '  lan: { url: "https://10.1.2.3/hooks" }',
        '  meta: { url: "http://169.254.169.254/latest" }',
        '  six: { url: "http://[::1]:3000/hooks" }',
        '  bus: { nats: { url: "nats://127.0.0.1:4222", subject: "hooks.{source}" } }',
        '  allowed: { url: "http://localhost:3001/", allowPrivateNetwork: true }',
        '  public: { url: "https://app.example.com/hooks" }',
        '  worker: { pull: true }',
        'sources:',
        '  shop: { forward: [{ to: local }] }',
        '',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await runCli(['check-config', path]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('is valid');
    const warnings = stderr.trim().split('\n');
    expect(warnings).toHaveLength(7);
    for (const name of ['local', 'dev', 'loop', 'lan', 'meta', 'six', 'bus']) {
      const line = warnings.find((w) => w.startsWith(`warning: destination ${name}: `));
      expect(line, name).toBeDefined();
      expect(line).toContain(`add allowPrivateNetwork: true to destinations.${name}`);
      expect(line).toContain('destination_not_allowed');
    }
    expect(warnings.find((w) => w.includes('destination local:'))).toContain('localhost is a loopback name');
    expect(warnings.find((w) => w.includes('destination lan:'))).toContain('10.1.2.3 is a private address');
    expect(warnings.find((w) => w.includes('destination meta:'))).toContain('169.254.169.254 is a link-local address');
    expect(stderr).not.toMatch(/destination (allowed|public|worker):/);
  });

  it('never prints a destination header name (it may hold a secret), only where the header is', async () => {
    const path = file(
      'header-names.yaml',
      [
        'destinations:',
        '  app:',
        '    url: "https://app.example.com/hooks"',
        '    headers:',
        '      "X-Fine": "ok"',
        '      "Authorization: Bearer sk_live_name1": "x"',
        '      "X-sk_live_name2": "caf\\u0001"',
        '',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await runCli(['check-config', path]);
    expect(code).toBe(1);
    expect(`${stdout}\n${stderr}`).not.toContain('sk_live');
    expect(stderr).toContain('destinations.app.headers (header 2 of 3, name not shown): not a valid header name');
    expect(stderr).toContain('destinations.app.headers (header 3 of 3, name not shown): a header value holds');
    // A value of the wrong type is found by the schema, whose path would hold the name.
    const typed = file(
      'header-type.yaml',
      'destinations:\n  app:\n    url: "https://x.example"\n    headers: { "X-sk_live_name3": 5 }\n',
    );
    const wrongType = await runCli(['check-config', typed]);
    expect(wrongType.code).toBe(1);
    expect(`${wrongType.stdout}\n${wrongType.stderr}`).not.toContain('sk_live');
    expect(wrongType.stderr).toContain('destinations.app.headers (header 1 of 1, name not shown): must be string');
  });

  it('reports a missing file, and a missing argument as a usage error', async () => {
    const missing = await runCli(['check-config', join(dir.path, 'nope.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('there is no such file: check the path (ENOENT)');
    const usage = await runCli(['check-config']);
    expect(usage.code).toBe(2);
  });
});
