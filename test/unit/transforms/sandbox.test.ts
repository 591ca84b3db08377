import { beforeAll, describe, expect, it } from 'vitest';
import { prepareTransformEngine } from '../../../src/transforms/quickjs-engine.js';
import { Sandbox, TransformCompileError, type SandboxRun } from '../../../src/transforms/sandbox.js';

beforeAll(async () => {
  await prepareTransformEngine();
});

const EVENT = JSON.stringify({
  id: 'd1',
  eventType: 'invoice.paid',
  headers: { 'x-kind': 'a' },
  body: { id: 'in_1', amount: 5 },
});

function runOnce(code: string, event = EVENT, limits = { timeoutMs: 50, memoryMb: 16 }): SandboxRun {
  const sandbox = Sandbox.compile('t', code, limits);
  try {
    return sandbox.run(event);
  } finally {
    sandbox.dispose();
  }
}

function compileProblem(code: string): TransformCompileError {
  try {
    Sandbox.compile('t', code).dispose();
  } catch (error) {
    if (error instanceof TransformCompileError) return error;
    throw error;
  }
  throw new Error('compiled');
}

describe('the transform sandbox (CONTRACT 10)', () => {
  it('calls the default export with the event and answers its output', () => {
    const run = runOnce(
      "export default function (event) { console.log('seen', event.eventType, { n: 1 }); return { body: { text: event.eventType + ' ' + event.body.id }, headers: { 'X-Kind': 'invoice', 'x-n': 3 } }; }",
    );
    expect(run).toMatchObject({
      output: { body: { text: 'invoice.paid in_1' }, headers: { 'x-kind': 'invoice', 'x-n': '3' } },
      logs: ['seen invoice.paid {"n":1}'],
    });
    expect(run.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('answers null for null and undefined (drop), and keeps a string body a string', () => {
    expect(runOnce('export default () => null')).toMatchObject({ output: null });
    expect(runOnce('export default () => {}')).toMatchObject({ output: null });
    expect(runOnce("export default (e) => ({ body: 'plain ' + e.id })")).toMatchObject({ output: { body: 'plain d1' } });
    expect(runOnce('export default (e) => ({ headers: { a: "b" } })')).toMatchObject({ output: { headers: { a: 'b' } } });
  });

  it('awaits an async transform', () => {
    expect(runOnce('export default async (e) => { await null; return { body: [e.id] }; }')).toMatchObject({
      output: { body: ['d1'] },
    });
  });

  it('reuses one context from run to run', () => {
    const sandbox = Sandbox.compile('t', 'let n = 0; export default () => ({ body: ++n })');
    try {
      expect([1, 2, 3].map(() => sandbox.run(EVENT))).toMatchObject([
        { output: { body: 1 } },
        { output: { body: 2 } },
        { output: { body: 3 } },
      ]);
    } finally {
      sandbox.dispose();
    }
  });

  it('keeps the first 20 lines of console.log', () => {
    const run = runOnce('export default () => { for (let i = 0; i < 50; i++) console.log(i); return null; }');
    expect(run.logs).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  it('answers a throw as an error, with the line', () => {
    const run = runOnce("export default function () {\n  throw new Error('no amount');\n}");
    expect(run).toMatchObject({ error: 'Error: no amount (line 2)' });
  });

  it('refuses headers Reception sets, and outputs that are not { body, headers }', () => {
    expect(runOnce("export default () => ({ headers: { 'webhook-id': 'x' } })")).toMatchObject({
      error: 'headers: webhook-id is set by Reception and cannot be set by a transform',
    });
    expect(runOnce("export default () => ({ headers: { 'X-Reception-Source': 'x' } })")).toMatchObject({
      error: expect.stringContaining('set by Reception'),
    });
    expect(runOnce('export default () => 5')).toMatchObject({ error: expect.stringContaining('returned number') });
    expect(runOnce('export default () => ({ bdy: 1 })')).toMatchObject({ error: expect.stringContaining('unknown keys (bdy)') });
  });

  it('stops an endless loop at its deadline, and the next run works', () => {
    const sandbox = Sandbox.compile('t', 'export default (e) => { if (e.id === "loop") for (;;) {} return { body: 1 }; }', {
      timeoutMs: 50,
      memoryMb: 16,
    });
    try {
      const started = performance.now();
      expect(sandbox.run(JSON.stringify({ id: 'loop' }))).toMatchObject({ error: 'over its time limit (50 ms)' });
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(45);
      expect(took).toBeLessThan(2000);
      expect(sandbox.run(EVENT)).toMatchObject({ output: { body: 1 } });
    } finally {
      sandbox.dispose();
    }
  });

  it('stops a transform over its memory limit, and the next run works', () => {
    const sandbox = Sandbox.compile(
      't',
      'export default (e) => { if (e.id === "big") { const a = []; for (;;) a.push(new Array(1000000).fill(a.length)); } return { body: 1 }; }',
      { timeoutMs: 5000, memoryMb: 4 },
    );
    try {
      expect(sandbox.run(JSON.stringify({ id: 'big' }))).toMatchObject({ error: 'over its memory limit (4 MB)' });
      expect(sandbox.run(EVENT)).toMatchObject({ output: { body: 1 } });
    } finally {
      sandbox.dispose();
    }
  });

  it('stops endless recursion', () => {
    expect(runOnce('const f = (n) => f(n + 1) + 1; export default () => f(0)')).toMatchObject({
      error: 'InternalError: stack overflow (line 1)',
    });
  });

  describe('refuses every way out', () => {
    const tries: Array<[string, string]> = [
      ['require', "require('fs')"],
      ['process', 'process.env'],
      ['fetch', "fetch('http://127.0.0.1/')"],
      ['setTimeout', 'setTimeout(() => 1, 1)'],
      ['setInterval', 'setInterval(() => 1, 1)'],
      ['XMLHttpRequest', 'new XMLHttpRequest()'],
      ['WebSocket', "new WebSocket('ws://127.0.0.1/')"],
      ['std and os of quickjs-libc', 'std.open("/etc/passwd", "r") || os.open("/etc/passwd")'],
      ['the Function constructor', "Function('return process')()"],
      ['a constructor chain', "(() => 1).constructor('return this.process.env')()"],
    ];
    for (const [name, expression] of tries) {
      it(name, () => {
        const run = runOnce(`export default () => { const out = ${expression}; return { body: String(out) }; }`);
        expect(run).toMatchObject({ error: expect.stringMatching(/ReferenceError|TypeError/) });
      });
    }

    it('import() of a module', () => {
      const run = runOnce(
        "export default async () => { const fs = await import('fs'); return { body: typeof fs.readFileSync }; }",
      );
      expect(run).toMatchObject({ error: expect.stringContaining("could not load module 'fs'") });
    });

    it('import() of a file by its path', () => {
      const run = runOnce("export default async () => { const m = await import('/etc/passwd'); return { body: String(m) }; }");
      expect(run).toMatchObject({ error: expect.stringContaining('could not load module') });
    });

    it('a static import (a compile error)', () => {
      expect(
        compileProblem(
          "import { readFileSync } from 'node:fs';\nexport default () => ({ body: readFileSync('/etc/passwd', 'utf8') });",
        ).message,
      ).toContain("could not load module 'node:fs'");
    });

    it('globalThis holds nothing of the host', () => {
      const run = runOnce(
        'export default () => ({ body: Object.getOwnPropertyNames(globalThis).filter((n) => /^(require|process|fetch|setTimeout|std|os|Buffer|module|__dirname)$/.test(n)) })',
      );
      expect(run).toMatchObject({ output: { body: [] } });
    });
  });

  describe('compile errors', () => {
    it('a syntax error, with its line', () => {
      const problem = compileProblem('export default function (event) {\n  return { body: event.body. };\n}');
      expect(problem.message).toMatch(/^SyntaxError: /);
      expect(problem.line).toBe(2);
    });

    it('no default export', () => {
      expect(compileProblem('export function transform() {}').message).toContain('no default export function');
      expect(compileProblem('export default 42').message).toContain('no default export function');
    });

    it('a module that throws as it loads', () => {
      expect(compileProblem("throw new Error('boom');\nexport default () => null").message).toContain('Error: boom');
    });

    it('a module that loops as it loads', () => {
      expect(compileProblem('for (;;) {}\nexport default () => null').message).toBe('over its time limit (50 ms)');
    });
  });
});
