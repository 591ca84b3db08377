import { performance } from 'node:perf_hooks';
import type { Database } from '../platform/db/sqlite/driver.js';
import { syncLevel, withoutSync } from '../platform/db/sqlite/without-sync.js';
import { deliveryFromRow, DELIVERY_COLUMNS, storedEventType, type DeliveryRow } from '../deliveries/delivery-row.js';
import type { HeaderList } from '../platform/http/header-list.js';
import type { DeriveEventType, IndexBudget, IndexProgress } from '../deliveries/delivery-store.js';
import { searchText } from './search-text.js';
import { bucketOf } from '../deliveries/delivery-filter.js';
import { rowsWithin } from '../platform/db/step-reading.js';

/**
 * The search index on SQLite (migration 000006): FTS5 trigrams of each
 * delivery's search text, written after the delivery's commit, a short
 * transaction at a time (see `step`), and the background fill of deliveries
 * stored before the index and event types existed.
 *
 * Why after the commit: the trigram index of a 1 KiB body costs 150 to
 * 300 µs, three to six times what storing the delivery costs; in the
 * commit it would have cut how many deliveries a second Reception takes
 * to a third (bench/RESULTS.md at commit 2d24709, "Search index"). A search does not find a
 * delivery until it is indexed: see the README for how far it may lag.
 */

/** Characters of text per indexed row; a delivery's text is cut into chunks of this many. */
export const CHUNK_CHARS = 64 * 1024;
/** Each chunk goes on this many characters into the next, so that a search of up to this many is never cut in two. */
export const CHUNK_OVERLAP = 512;
/** Rows of the index per delivery at most (its rowid is seq * 1024 + chunk): 64 Mi characters of text. */
export const MAX_CHUNKS = 1024;

/** The chunks `text` is indexed in (at least one, at most MAX_CHUNKS). */
export function chunkCount(text: string): number {
  if (text.length <= CHUNK_CHARS + CHUNK_OVERLAP) return 1;
  return Math.min(MAX_CHUNKS, Math.ceil((text.length - CHUNK_OVERLAP) / CHUNK_CHARS));
}

function chunk(text: string, index: number): string {
  return text.slice(index * CHUNK_CHARS, (index + 1) * CHUNK_CHARS + CHUNK_OVERLAP);
}

/** The trigrams a search asks the index for, at most: the rarest ones (see TrigramSample). */
export const QUERY_TRIGRAMS = 4;

/**
 * The FTS5 query for the rows that have trigrams of `text`: every distinct
 * one, or with `frequency`, the QUERY_TRIGRAMS that it says are the rarest
 * (detail=none keeps no positions, so a phrase cannot be asked for: the
 * candidates are checked against the text itself afterwards; the rarest
 * trigrams make the fewest candidates, and the common ones cost the index
 * the most to intersect: 300 ms for all 19 of an e-mail address on 200,000
 * deliveries, 1 ms for its 4 rarest). Undefined for a text of fewer than
 * three characters, which has no trigram.
 */
export function trigramQuery(text: string, frequency?: (trigram: string) => number): string | undefined {
  const points = [...text];
  const trigrams = new Map<string, string>();
  for (let i = 0; i + 3 <= points.length; i++) {
    const trigram = points.slice(i, i + 3).join('');
    trigrams.set(trigram.toLowerCase(), trigram);
  }
  if (trigrams.size === 0) return undefined;
  let chosen = [...trigrams];
  if (frequency !== undefined) {
    chosen = chosen
      .map((entry, order) => ({ entry, order, seen: frequency(entry[0]) }))
      .sort((a, b) => a.seen - b.seen || a.order - b.order)
      .slice(0, QUERY_TRIGRAMS)
      .map(({ entry }) => entry);
  }
  return chosen.map(([, trigram]) => `"${trigram.replaceAll('"', '""')}"`).join(' AND ');
}

/** Deliveries the sample reads, newest first, and the characters of each it looks at. */
const SAMPLE_ROWS = 500;
const SAMPLE_CHARS = 4096;
/** How long a sample serves before it is read again. */
const SAMPLE_MS = 60 * 60 * 1000;

/**
 * How common each trigram is, estimated from the newest deliveries: in how
 * many of SAMPLE_ROWS of them it occurs (lower case). FTS5 keeps no cheap
 * count per term (its vocabulary table took 15 ms a term on 200,000), and
 * which trigrams are rare depends on the data (`xam` is rare in English,
 * and in every body that names example.com). Read on the first search and
 * again when it is an hour old: about 50 ms.
 */
export class TrigramSample {
  private counts = new Map<string, number>();
  private takenAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly newest: (limit: number) => Iterable<{ headers: string; raw: Buffer }>) {}

  /** In how many of the sampled deliveries the (lower-case) trigram occurs. */
  frequency(trigram: string): number {
    if (Date.now() - this.takenAt > SAMPLE_MS) this.take();
    return this.counts.get(trigram) ?? 0;
  }

  private take(): void {
    this.takenAt = Date.now();
    const counts = new Map<string, number>();
    for (const row of this.newest(SAMPLE_ROWS)) {
      const text = searchText(JSON.parse(row.headers) as HeaderList, row.raw)
        .slice(0, SAMPLE_CHARS)
        .toLowerCase();
      const seen = new Set<string>();
      const points = [...text];
      for (let i = 0; i + 3 <= points.length; i++) seen.add(`${points[i]}${points[i + 1]}${points[i + 2]}`);
      for (const trigram of seen) counts.set(trigram, (counts.get(trigram) ?? 0) + 1);
    }
    this.counts = counts;
  }
}

interface Position {
  next_seq: number;
  next_chunks: number;
  backfill_seq: number;
  backfill_chunks: number;
}

/** A deliveries row as SQLite hands it back: its integers are numbers. */
type OldRow = DeliveryRow & { seq: number; received_at: number };

interface TextRow {
  seq: number;
  headers: string;
  raw: Buffer;
}

/** The rows and chunks one step indexes, as the transactions see them. */
interface StepState {
  deadline: number;
  done: number;
  /** Bytes of rows (headers and body) read so far. */
  read: number;
}

export class SqliteSearchIndex {
  private readonly q;
  private readonly stepTransaction: (budget: IndexBudget, derive: DeriveEventType) => IndexProgress;

  constructor(private readonly db: Database) {
    this.durableSync = syncLevel(db);
    this.q = {
      position: db.prepare<[], Position>('SELECT next_seq, next_chunks, backfill_seq, backfill_chunks FROM index_position'),
      moveNext: db.prepare<[number, number]>('UPDATE index_position SET next_seq = ?, next_chunks = ?'),
      moveBackfill: db.prepare<[number, number]>('UPDATE index_position SET backfill_seq = ?, backfill_chunks = ?'),
      // length() of a blob reads no overflow page: the sizes cost what the row headers do (see rowsWithin).
      newSizes: db.prepare<[number, number], { bytes: number }>(
        'SELECT length(headers) + length(raw) AS bytes FROM deliveries WHERE seq >= ? ORDER BY seq LIMIT ?',
      ),
      oldSizes: db.prepare<[number, number], { bytes: number }>(
        'SELECT length(headers) + length(raw) AS bytes FROM deliveries WHERE seq <= ? ORDER BY seq DESC LIMIT ?',
      ),
      exists: db.prepare<[number], { seq: number }>('SELECT seq FROM deliveries WHERE seq = ?'),
      newRows: db.prepare<[number, number], TextRow>(
        'SELECT seq, headers, raw FROM deliveries WHERE seq >= ? ORDER BY seq LIMIT ?',
      ),
      oldRows: db.prepare<[number, number], OldRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE seq <= ? ORDER BY seq DESC LIMIT ?`,
      ),
      insert: db.prepare<[number, string]>('INSERT INTO delivery_text (rowid, text) VALUES (?, ?)'),
      type: db.prepare<[string, number]>('UPDATE deliveries SET event_type = ? WHERE seq = ? AND event_type IS NULL'),
      span: db.prepare<[number, number, number]>(`INSERT INTO time_buckets (bucket, min_seq, max_seq) VALUES (?, ?, ?)
        ON CONFLICT (bucket) DO UPDATE SET min_seq = min(min_seq, excluded.min_seq), max_seq = max(max_seq, excluded.max_seq)`),
      count: db.prepare<[string, string, number]>(
        `INSERT INTO event_types (source, event_type, count, last_received_at) VALUES (?, ?, 1, ?)
          ON CONFLICT (source, event_type) DO UPDATE SET
            count = count + 1, last_received_at = max(last_received_at, excluded.last_received_at)`,
      ),
    };
    this.stepTransaction = db.transaction((budget: IndexBudget, derive: DeriveEventType): IndexProgress => {
      const state: StepState = { deadline: performance.now() + budget.maxMs, done: 0, read: 0 };
      const newer = this.indexNew(state, budget.maxRows);
      if (newer) return { done: state.done, more: true };
      const older = this.backfill(state, budget.maxRows, derive);
      return { done: state.done, more: older };
    });
  }

  private filledAlready = false;

  /**
   * True once every delivery stored before migration 000006 has its type
   * and its time bucket (then, and only then, a list may use the buckets).
   */
  filled(): boolean {
    this.filledAlready ||= (this.q.position.get()?.backfill_seq ?? 0) <= 0;
    return this.filledAlready;
  }

  /**
   * One step (see InboxStore.indexStep), in one transaction, which does not
   * wait for the disk: a step lost to a power cut is done again (its place
   * in the index is in the same transaction), and with `full` durability an
   * fsync per step would double the fsyncs of a busy inbox (measured: ingest
   * at 0.68 of the build before the index, bench/RESULTS.md).
   */
  step(budget: IndexBudget, derive: DeriveEventType): IndexProgress {
    return withoutSync(this.db, this.durableSync, () => this.stepTransaction(budget, derive));
  }

  /** The connection's own `synchronous` level, which deliveries keep. */
  private readonly durableSync: number;

  /** New deliveries, oldest first, from `next_seq`; true when time ran out with more to do. */
  private indexNew(state: StepState, maxRows: number): boolean {
    const position = this.q.position.get();
    if (position === undefined) return false;
    let seq = position.next_seq;
    let chunks = position.next_chunks;
    // A large delivery indexed over several steps: its text is at hand, and its body need not be read again.
    const kept = this.lastText;
    if (chunks > 0 && kept?.seq === seq && this.q.exists.get(seq) !== undefined) {
      const reached = this.indexText(seq, kept.text, chunks, state);
      if (reached !== undefined) {
        this.q.moveNext.run(seq, reached);
        return true;
      }
      seq += 1;
      chunks = 0;
      if (performance.now() > state.deadline) {
        this.q.moveNext.run(seq, chunks);
        return this.hasNew(seq);
      }
    }
    const sizes = this.q.newSizes.all(seq, maxRows).map((row) => row.bytes);
    const rows = this.q.newRows.all(seq, rowsWithin(sizes, state));
    for (const row of rows) {
      const from = row.seq === seq ? chunks : 0;
      const reached = this.indexChunks(row, from, state);
      if (reached !== undefined) {
        this.q.moveNext.run(row.seq, reached);
        return true;
      }
      seq = row.seq + 1;
      chunks = 0;
      if (performance.now() > state.deadline) break;
    }
    this.q.moveNext.run(seq, chunks);
    return rows.length > 0 && (rows.length === maxRows || performance.now() > state.deadline || this.hasNew(seq));
  }

  private hasNew(seq: number): boolean {
    return this.q.newSizes.get(seq, 1) !== undefined;
  }

  /** Deliveries stored before migration 000006, newest first: typed, counted and indexed. True while some are left. */
  private backfill(state: StepState, maxRows: number, derive: DeriveEventType): boolean {
    const position = this.q.position.get();
    if (position === undefined || position.backfill_seq <= 0) return false;
    const sizes = this.q.oldSizes.all(position.backfill_seq, maxRows).map((row) => row.bytes);
    if (sizes.length === 0) {
      this.q.moveBackfill.run(0, 0);
      return false;
    }
    // New deliveries read this step leave less to read here; none, and the fill goes on at the next step.
    const within = rowsWithin(sizes, state);
    if (within === 0) return true;
    const rows = this.q.oldRows.all(position.backfill_seq, within);
    for (const row of rows) {
      const from = row.seq === position.backfill_seq ? position.backfill_chunks : 0;
      if (from === 0) this.typeOne(row, derive);
      const reached = this.indexChunks(row, from, state);
      if (reached !== undefined) {
        this.q.moveBackfill.run(row.seq, reached);
        return true;
      }
      this.q.moveBackfill.run(row.seq - 1, 0);
      if (performance.now() > state.deadline) return true;
    }
    return true;
  }

  private typeOne(row: OldRow, derive: DeriveEventType): void {
    this.q.span.run(bucketOf(row.received_at), row.seq, row.seq);
    if (row.event_type !== null) return;
    const type = storedEventType(derive(deliveryFromRow(row)));
    if (this.q.type.run(type, row.seq).changes > 0) this.q.count.run(row.source, type, row.received_at);
  }

  /** The last text made, by seq: a large body is indexed over several steps, each of which would make it again. */
  private lastText: { seq: number; text: string } | undefined;

  /** A delivery's search text; the same string again for the delivery of the step before (a delivery never changes). */
  private textOf(row: Pick<TextRow, 'seq' | 'headers' | 'raw'>): string {
    if (this.lastText?.seq === row.seq) return this.lastText.text;
    const text = searchText(JSON.parse(row.headers) as HeaderList, row.raw);
    // Kept only while more than a chunk is left to do: small texts are done in one step.
    this.lastText = chunkCount(text) > 1 ? { seq: row.seq, text } : undefined;
    return text;
  }

  /**
   * Indexes the chunks of a delivery's text from `from` on. Undefined when
   * all are done; else how many are, time having run out before the rest.
   */
  private indexChunks(row: Pick<TextRow, 'seq' | 'headers' | 'raw'>, from: number, state: StepState): number | undefined {
    return this.indexText(row.seq, this.textOf(row), from, state);
  }

  private indexText(seq: number, text: string, from: number, state: StepState): number | undefined {
    const count = chunkCount(text);
    for (let index = from; index < count; index++) {
      this.q.insert.run(seq * MAX_CHUNKS + index, chunk(text, index));
      state.done++;
      if (index + 1 < count && performance.now() > state.deadline) return index + 1;
    }
    return undefined;
  }
}
