/**
 * The string values at a few paths of a JSON text, read without building its
 * value (the event type of a delivery, CONTRACT 8: `type`, `event.type`,
 * `data.kind`...). Linear in the bytes whatever they hold: what lies off the
 * paths is skipped (a string with `indexOf`, a container by counting its
 * brackets), so 5 MiB of half a million keys costs milliseconds, where
 * `JSON.parse` took up to a second (see parse-json.ts).
 *
 * Meant for a body that `checkJsonBody` accepted. On bytes that are not
 * JSON it stops where they stop making sense and answers what it found so
 * far; it never throws and never loops.
 */

/** A path from the top-level object: `['event', 'type']`. */
export type JsonPath = readonly string[];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (byte: number | undefined): boolean => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** The key of a path in the answer: its keys joined by NUL (a key holds no NUL that a path would name). */
export function pathKey(path: JsonPath): string {
  return path.join('\u0000');
}

/**
 * For each of `paths` whose value is a string, that string, keyed by
 * `pathKey(path)`. As with `JSON.parse`, a key given twice counts as its
 * last occurrence (an earlier string under it is forgotten).
 */
export function jsonStringsAt(raw: Buffer, paths: readonly JsonPath[] | JsonPaths): Map<string, string> {
  const found = new Map<string, string>();
  const wanted = paths instanceof JsonPaths ? paths : new JsonPaths(paths);
  if (wanted.empty) return found;
  const reader = new Reader(raw, wanted, found);
  try {
    reader.top();
  } catch (error) {
    if (!(error instanceof Malformed)) throw error;
  }
  return found;
}

/**
 * Paths made ready for reading once: a caller that asks for the same paths
 * for every delivery (the event type) keeps one and saves building these
 * sets each time.
 */
export class JsonPaths {
  /** The prefixes of the wanted paths (every path's first n keys), as path keys. */
  readonly prefixes = new Set<string>();
  readonly wanted = new Set<string>();
  /** The longest key a wanted path has, in bytes as JSON may spell it (`\uXXXX` is six). */
  readonly longestKey: number;
  /** The UTF-8 lengths of the wanted keys: a key spelt without escapes and of another length is none of them. */
  readonly keyLengths = new Set<number>();

  constructor(paths: readonly JsonPath[]) {
    let longest = 0;
    for (const path of paths) {
      this.wanted.add(pathKey(path));
      for (let length = 1; length < path.length; length++) this.prefixes.add(pathKey(path.slice(0, length)));
      for (const key of path) {
        longest = Math.max(longest, key.length);
        this.keyLengths.add(Buffer.byteLength(key));
      }
    }
    this.longestKey = longest * 6;
  }

  get empty(): boolean {
    return this.wanted.size === 0;
  }
}

/** Thrown inside the reader only, where the bytes stop being JSON. */
class Malformed {}

class Reader {
  private at: number;
  private readonly prefixes: ReadonlySet<string>;
  private readonly wanted: ReadonlySet<string>;
  private readonly longestKey: number;
  private readonly keyLengths: ReadonlySet<number>;

  constructor(
    private readonly bytes: Buffer,
    paths: JsonPaths,
    private readonly found: Map<string, string>,
  ) {
    this.at = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    ({ prefixes: this.prefixes, wanted: this.wanted, longestKey: this.longestKey, keyLengths: this.keyLengths } = paths);
  }

  top(): void {
    this.space();
    if (this.bytes[this.at] !== OPEN_BRACE) return;
    this.object([]);
  }

  /** At `{`: reads the members, descending into those on a wanted path, skipping the rest. */
  private object(path: readonly string[]): void {
    this.at++;
    this.space();
    if (this.bytes[this.at] === CLOSE_BRACE) {
      this.at++;
      return;
    }
    for (;;) {
      this.space();
      if (this.bytes[this.at] !== QUOTE) throw new Malformed();
      const keyStart = this.at;
      this.skipString();
      const key = this.keyText(keyStart, this.at);
      this.space();
      if (this.bytes[this.at] !== COLON) throw new Malformed();
      this.at++;
      this.space();
      this.member(key === undefined ? undefined : [...path, key]);
      this.space();
      const next = this.bytes[this.at];
      this.at++;
      if (next === CLOSE_BRACE) return;
      if (next !== COMMA) throw new Malformed();
    }
  }

  /** A member's value: kept when its path is wanted and it is a string, read into when a wanted path goes through it. */
  private member(path: readonly string[] | undefined): void {
    if (path === undefined) {
      this.skipValue();
      return;
    }
    const key = pathKey(path);
    // A later occurrence of a key replaces the whole value of the earlier one.
    for (const earlier of this.found.keys()) {
      if (earlier === key || earlier.startsWith(`${key}\u0000`)) this.found.delete(earlier);
    }
    const first = this.bytes[this.at];
    if (first === QUOTE && this.wanted.has(key)) {
      const start = this.at;
      this.skipString();
      const text = this.stringText(start, this.at);
      if (text !== undefined) this.found.set(key, text);
      return;
    }
    if (first === OPEN_BRACE && this.prefixes.has(key)) {
      this.object(path);
      return;
    }
    this.skipValue();
  }

  /** A key's text, or undefined when it is longer than any wanted key could be spelt (it matches none). */
  private keyText(start: number, end: number): string | undefined {
    const length = end - start - 2;
    if (length > this.longestKey) return undefined;
    if (!this.keyLengths.has(length) && !this.hasBackslash(start + 1, end - 1)) return undefined;
    return this.stringText(start, end);
  }

  private hasBackslash(from: number, to: number): boolean {
    for (let at = from; at < to; at++) if (this.bytes[at] === BACKSLASH) return true;
    return false;
  }

  /** The text of the JSON string between `start` (its opening quote) and `end` (after its closing one). */
  private stringText(start: number, end: number): string | undefined {
    if (!this.hasBackslash(start + 1, end - 1)) return this.bytes.toString('utf8', start + 1, end - 1);
    try {
      const text: unknown = JSON.parse(this.bytes.subarray(start, end).toString('utf8'));
      return typeof text === 'string' ? text : undefined;
    } catch {
      return undefined;
    }
  }

  private space(): void {
    while (isSpace(this.bytes[this.at])) this.at++;
  }

  /**
   * At `"`: moves past the closing quote, a backslash taking the byte after
   * it along. Short strings (keys) by hand; past 64 bytes, `indexOf` finds
   * the next quote faster.
   */
  private skipString(): void {
    const bytes = this.bytes;
    let at = this.at + 1;
    const near = Math.min(bytes.length, at + 64);
    for (; at < near; at++) {
      const byte = bytes[at];
      if (byte === QUOTE) {
        this.at = at + 1;
        return;
      }
      if (byte === BACKSLASH) at++;
    }
    for (;;) {
      const quote = bytes.indexOf(QUOTE, at);
      if (quote === -1) throw new Malformed();
      // Escaped when an odd run of backslashes ends right before it (one left before `at` was taken with its byte).
      let backslashes = 0;
      while (quote - 1 - backslashes >= at && bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) {
        this.at = quote + 1;
        return;
      }
      at = quote + 1;
    }
  }

  /** Moves past one value of any kind; a container by counting brackets outside strings. */
  private skipValue(): void {
    const first = this.bytes[this.at];
    if (first === QUOTE) {
      this.skipString();
      return;
    }
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      // A number or a literal: up to the next delimiter.
      const start = this.at;
      for (;;) {
        const byte = this.bytes[this.at];
        if (byte === undefined || byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isSpace(byte)) break;
        this.at++;
      }
      if (this.at === start) throw new Malformed();
      return;
    }
    let depth = 0;
    for (;;) {
      const byte = this.bytes[this.at];
      if (byte === undefined) throw new Malformed();
      if (byte === QUOTE) {
        this.skipString();
        continue;
      }
      this.at++;
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return;
      }
    }
  }
}
