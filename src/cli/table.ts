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

/** A column of lines printed one at a time: its width at least `min`, growing with its cells up to `max`. */
export interface StreamColumn {
  min: number;
  max: number;
  /** Numbers (a size) line up on the right. */
  align?: 'right';
}

/**
 * Aligned columns for lines printed as they come (`reception tail`), when
 * the widest cell is not known in advance: each column but the last is
 * padded to its minimum, or to the widest cell seen so far when that is
 * wider (up to its maximum: a longer cell, a hostile source name, say,
 * overflows its own line only). Cells must already be escaped for the
 * terminal; widths are counted as a terminal draws them.
 */
export class StreamColumns {
  private readonly widths: number[];

  constructor(private readonly columns: readonly StreamColumn[]) {
    this.widths = columns.map((column) => column.min);
  }

  /** The cells as one line, the last one as it is (with an empty last cell: the padded columns and a separator). */
  line(cells: readonly string[]): string {
    return cells
      .map((cell, i) => {
        const column = this.columns[i];
        if (column === undefined || i === cells.length - 1) return cell;
        const width = displayWidth(cell);
        if (width <= column.max) this.widths[i] = Math.max(this.widths[i] ?? 0, width);
        const room = this.widths[i] ?? 0;
        return column.align === 'right' ? ' '.repeat(Math.max(0, room - width)) + cell : padToWidth(cell, room);
      })
      .join('  ');
  }
}
