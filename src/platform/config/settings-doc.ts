import { SETTINGS, shownDefault, type SettingSpec } from './settings-table.js';

/** The lines around the settings table of docs/settings.md, which is written from `SETTINGS` (`npm run docs:settings`). */
export const SETTINGS_TABLE_START =
  '<!-- settings table: written from src/platform/config/settings-table.ts by `npm run docs:settings`; edit it there -->';
export const SETTINGS_TABLE_END = '<!-- end of settings table -->';

/** The table of settings (docs/settings.md), in Markdown: variable, `serve` flag, default, meaning. */
export function settingsMarkdownTable(): string {
  const rows = Object.values(SETTINGS).map((spec: SettingSpec<unknown>) => {
    const fallback = shownDefault(spec);
    const cells = [
      `\`${spec.env}\``,
      `\`--${spec.flag}\``,
      'value' in fallback ? `\`${fallback.value}\`` : fallback.text,
      spec.doc,
    ];
    return `| ${cells.map(cell).join(' | ')} |`;
  });
  return ['| variable | `serve` flag | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** `page` with the text between the markers replaced by the table; throws when a marker is missing. */
export function withSettingsTable(page: string): string {
  const start = page.indexOf(SETTINGS_TABLE_START);
  const end = page.indexOf(SETTINGS_TABLE_END);
  if (start === -1 || end < start)
    throw new Error(`docs/settings.md has no "${SETTINGS_TABLE_START}" … "${SETTINGS_TABLE_END}" section`);
  return `${page.slice(0, start + SETTINGS_TABLE_START.length)}\n\n${settingsMarkdownTable()}\n\n${page.slice(end)}`;
}

/** A table cell: a `|` would end it early. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}
