// Writes the README's settings table from src/config/settings-table.ts (compiled to dist/ first:
// `npm run docs:settings`). test/unit/config/settings-table.test.ts fails when the README differs.
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { withSettingsTable } from '../dist/src/config/settings-readme.js';

const readme = readFileSync('README.md', 'utf8');
const written = withSettingsTable(readme);
if (written === readme) {
  process.stdout.write('README.md: the settings table is up to date\n');
} else {
  writeFileSync('README.md', written);
  process.stdout.write('README.md: settings table written\n');
}
