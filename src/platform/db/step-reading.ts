/**
 * How much of the deliveries one step of the work behind the commits reads
 * (InboxStore.indexStep, on both stores): the rows are chosen by their
 * sizes, read first, so that a step over large bodies does not read up to
 * `maxRows` of them to index a few.
 */

/**
 * Bytes of rows (headers and body) that one step reads at most, new and old
 * together, save one row however large (see `rowsWithin`).
 */
export const READ_BYTES = 1024 * 1024;

/**
 * How many of the rows whose sizes are `sizes` (in the order they would be
 * read) a step reads, `step.read` bytes having been read already, which it
 * adds theirs to: as many as keep the step within READ_BYTES, and at least
 * one if it has read nothing yet, so that every step makes progress; none
 * when its reading is spent. Reading 500 rows of 1 MiB bodies to index one
 * of them took 11 % of the server's time under a load of 1 MiB bodies, and
 * its garbage as much again (docs/storage.md, "After the answer"). The sizes cost
 * little: SQLite's length() of a blob and PostgreSQL's octet_length() of a
 * TOASTed value read no overflow page, only the value's length.
 */
export function rowsWithin(sizes: readonly number[], step: { read: number }): number {
  let count = 0;
  let bytes = step.read;
  for (const size of sizes) {
    if (bytes + size > READ_BYTES && (count > 0 || step.read > 0)) break;
    bytes += size;
    count++;
  }
  step.read = bytes;
  return count;
}
