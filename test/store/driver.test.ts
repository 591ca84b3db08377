import { describe, expect, it } from 'vitest';
import { describeDriver } from '../../src/platform/db/sqlite/driver.js';

describe('the SQLite driver for this Node', () => {
  const major = Number(process.versions.node.split('.')[0]);

  it('is better-sqlite3 13 on Node 22 and later, 12 on Node 20, and says which', () => {
    const description = describeDriver();
    expect(description).toMatch(/^better-sqlite3 \d+\.\d+\.\d+ \(SQLite 3\.\d+\.\d+\)$/);
    expect(description.startsWith(major >= 22 ? 'better-sqlite3 13.' : 'better-sqlite3 12.')).toBe(true);
  });
});
