/** Lines of aligned columns, and ages, for the commands that print lists (forwards, destinations). */
import { displayWidth, padToWidth } from '../platform/text/display-width.js';

/**
 * Pads every column but the last to its widest cell, two spaces apart.
 * Cells must already be escaped for the terminal; widths are counted as a
 * terminal draws them (a CJK character or an emoji takes two columns).
 */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell));
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : padToWidth(cell, widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** "45s", "3m 12s", "2h 5m", "4d 3h": how long ago, or how long until, to a human. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}
