import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { environmentWithFlags, serveSpec } from '../../../src/cli/serve.js';
import { parseCommand, renderHelp } from '../../../src/cli/usage.js';
import { SETTINGS_TABLE_END, SETTINGS_TABLE_START, settingsMarkdownTable } from '../../../src/platform/config/settings-doc.js';
import { SETTINGS } from '../../../src/platform/config/settings-table.js';
import { loadSettings } from '../../../src/platform/config/settings.js';

const specs = Object.values(SETTINGS);

describe('the settings table', () => {
  it('is the table of docs/settings.md, as `npm run docs:settings` writes it', () => {
    const page = readFileSync(new URL('../../../docs/settings.md', import.meta.url), 'utf8');
    const start = page.indexOf(SETTINGS_TABLE_START);
    const end = page.indexOf(SETTINGS_TABLE_END);
    expect(start, 'docs/settings.md marks its settings table').toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    expect(page.slice(start + SETTINGS_TABLE_START.length, end).trim(), 'run `npm run docs:settings`').toBe(
      settingsMarkdownTable(),
    );
  });

  it('has a row for every setting that loadSettings reads', () => {
    const read = Object.keys(loadSettings({})).filter((key) => key !== 'ignoredVariables');
    expect(read.sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  it('names each variable and each flag once', () => {
    expect(new Set(specs.map((spec) => spec.env)).size).toBe(specs.length);
    expect(new Set(specs.map((spec) => spec.flag)).size).toBe(specs.length);
    for (const spec of specs) expect(spec.env).toMatch(/^RECEPTION_[A-Z_]+$/);
  });

  it.each(specs.map((spec) => [spec.env, spec.flag] as const))('%s has the serve flag --%s, which sets it', (env, flag) => {
    const { values } = parseCommand(serveSpec, [`--${flag}`, 'from-the-flag']);
    const { env: set, fromFlag } = environmentWithFlags({ [env]: 'from-the-variable' }, values);
    expect(set[env]).toBe('from-the-flag');
    expect(fromFlag.get(env)).toBe(`--${flag}`);
  });

  it('gives every flag in `reception serve --help`, with its variable and its default', () => {
    const help = renderHelp(serveSpec).replace(/\s+/g, ' ');
    for (const spec of specs) {
      expect(help).toContain(`--${spec.flag} ${spec.value}`);
      expect(help).toMatch(new RegExp(`\\[default [^\\]]+; env ${spec.env}\\]`));
    }
  });
});
