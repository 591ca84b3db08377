// Writes the settings table of docs/settings.md from src/platform/config/settings-table.ts (compiled to dist/ first:
// `npm run docs:settings`). test/unit/config/settings-table.test.ts fails when the page differs.
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { withSettingsTable } from '../dist/src/platform/config/settings-doc.js';

const PAGE = 'docs/settings.md';
const page = readFileSync(PAGE, 'utf8');
const written = withSettingsTable(page);
if (written === page) {
  process.stdout.write(`${PAGE}: the settings table is up to date\n`);
} else {
  writeFileSync(PAGE, written);
  process.stdout.write(`${PAGE}: settings table written\n`);
}
