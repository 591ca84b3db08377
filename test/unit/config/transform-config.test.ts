import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigFileError, loadConfigFileChecked } from '../../../src/config/source-config.js';
import { transformDefinitions, transformUsers } from '../../../src/config/transform-config.js';
import { transformVersion } from '../../../src/transforms/transforms.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** The config's `transforms` (CONTRACT 10): read beside the config file, compiled at load, a bad one a config error. */

const dir = tempDir('reception-transform-config-');
afterAll(() => dir.remove());
mkdirSync(join(dir.path, 'transforms'));

const SLACK = 'export default function (event) {\n  return { body: { text: event.eventType } };\n}\n';
writeFileSync(join(dir.path, 'transforms', 'slack-text.js'), SLACK);
writeFileSync(
  join(dir.path, 'transforms', 'broken.js'),
  'export default function (event) {\n  return { body: event.body. };\n}\n',
);

let count = 0;
function configFile(yaml: string): string {
  count += 1;
  const path = join(dir.path, `config-${count}.yaml`);
  writeFileSync(path, yaml);
  return path;
}

async function problemsOf(yaml: string): Promise<string> {
  const file = configFile(yaml);
  try {
    await loadConfigFileChecked(file);
  } catch (error) {
    if (error instanceof ConfigFileError) return error.message;
    throw error;
  }
  throw new Error('the file loaded');
}

const ROUTES = `
destinations:
  slack: { url: "https://hooks.example.com/x" }
sources:
  stripe:
    forward:
      - to: slack
        transform: slack-text
`;

describe('transforms in the config file', () => {
  it('reads a file relative to the config file, and inline code; versions are the hash of the code', async () => {
    const file = configFile(`transforms:
  slack-text:
    file: transforms/slack-text.js
    timeoutMs: 100
  inline:
    code: "export default (e) => null"
${ROUTES}`);
    const config = await loadConfigFileChecked(file);
    const definitions = transformDefinitions(config);
    expect(definitions).toEqual([
      { name: 'slack-text', version: transformVersion(SLACK), code: SLACK, limits: { timeoutMs: 100, memoryMb: 16 } },
      {
        name: 'inline',
        version: transformVersion('export default (e) => null'),
        code: 'export default (e) => null',
        limits: { timeoutMs: 50, memoryMb: 16 },
      },
    ]);
    expect(definitions[0]?.version).toMatch(/^[0-9a-f]{12}$/);
    expect(transformUsers(config)).toEqual(new Map([['slack-text', [{ source: 'stripe', destination: 'slack' }]]]));
  });

  it('a syntax error names the transform, the file and the line', async () => {
    const message = await problemsOf(`transforms:\n  slack-text:\n    file: transforms/broken.js\n${ROUTES}`);
    expect(message).toMatch(
      /config-\d+\.yaml:3:5: transforms\.slack-text\.file: SyntaxError: .* \(transforms\/broken\.js line 2, column \d+\)/,
    );
  });

  it('no default export function is a config error', async () => {
    const message = await problemsOf(`transforms:\n  slack-text:\n    code: "export const x = 1"\n${ROUTES}`);
    expect(message).toContain('transforms.slack-text.code: no default export function');
  });

  it('a route naming a transform the file does not have', async () => {
    const message = await problemsOf(`transforms:\n  slack-txt:\n    code: "export default () => null"\n${ROUTES}`);
    expect(message).toContain(
      'sources.stripe.forward[0].transform: there is no transform "slack-text" (did you mean "slack-txt"?)',
    );
  });

  it('a route with a transform to a pull destination is a config error (transforms apply only to what Reception sends)', async () => {
    const message = await problemsOf(`transforms:
  slack-text: { file: transforms/slack-text.js }
destinations:
  queue: { pull: true }
sources:
  stripe:
    forward:
      - to: queue
        transform: slack-text
`);
    expect(message).toContain('sources.stripe.forward[0].transform: "queue" is a pull destination');
  });

  it('file and code together, neither, an unreadable file, a bad limit, a bad name', async () => {
    const message = await problemsOf(`transforms:
  both: { file: transforms/slack-text.js, code: "export default () => null" }
  neither: { timeoutMs: 10 }
  missing: { file: transforms/nope.js }
  slow: { code: "export default () => null", timeoutMs: 600000 }
  "bad name": { code: "export default () => null" }
sources: {}
`);
    expect(message).toContain('transforms.both: takes either "file"');
    expect(message).toContain('transforms.neither: takes either "file"');
    expect(message).toContain('transforms.slow.timeoutMs: ');
    expect(message).toContain('transforms["bad name"]: a transform\'s name is 1 to 64 letters');
    // Read once the rest is valid: the file's problems come alone.
    const unread = await problemsOf('transforms:\n  missing: { file: transforms/nope.js }\n');
    expect(unread).toMatch(/transforms\.missing\.file: cannot read ".*nope\.js" \(ENOENT\)/);
  });

  it('a module that loops as it loads is stopped at its deadline: a config error', async () => {
    const message = await problemsOf('transforms:\n  loop: { code: "for (;;) {}\\nexport default () => null", timeoutMs: 20 }\n');
    expect(message).toContain('transforms.loop.code: over its time limit (20 ms)');
  });
});
