/** What a JSON text holds at its top level. */
export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

export type JsonScan =
  /** `start` is where the text begins: 3 after a UTF-8 byte order mark, else 0. */
  { ok: true; kind: JsonKind; start: number } | { ok: false; at: number; problem: string; tooDeep: boolean };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

function byteTable(bytes: Iterable<number>): Uint8Array {
  const table = new Uint8Array(256);
  for (const byte of bytes) table[byte] = 1;
  return table;
}

const codes = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
const WHITESPACE = byteTable([0x20, 0x09, 0x0a, 0x0d]);
const HEX_DIGIT = byteTable(codes('0123456789abcdefABCDEF'));
const SIMPLE_ESCAPE = byteTable(codes('"\\/bfnrt'));
/** Bytes that stand for themselves inside a string: all but control bytes, `"` and `\`. */
const PLAIN = byteTable(Array.from({ length: 256 - 0x20 }, (_, i) => i + 0x20).filter((b) => b !== QUOTE && b !== BACKSLASH));
const LITERALS: ReadonlyArray<readonly [number, Uint8Array]> = [
  [0x74, Buffer.from('true')],
  [0x66, Buffer.from('false')],
  [0x6e, Buffer.from('null')],
];

/** Bytes of a string read one at a time before the rest is read a word at a time (most keys and values are shorter). */
const SHORT_STRING = 32;

/** True when none of the word's four bytes is a control byte (below 0x20), `"` or `\`. */
function plainWord(w: number): boolean {
  const control = (w - 0x20202020) & ~w & 0x80808080;
  const q = w ^ 0x22222222;
  const quote = (q - 0x01010101) & ~q & 0x80808080;
  const b = w ^ 0x5c5c5c5c;
  const backslash = (b - 0x01010101) & ~b & 0x80808080;
  return (control | quote | backslash) === 0;
}

/** A 32-bit view of the whole words of `bytes`, and the index of its first byte. */
function wordsOf(bytes: Uint8Array): { first: number; view: Uint32Array } {
  const first = (4 - (bytes.byteOffset % 4)) % 4;
  const count = Math.max(0, Math.floor((bytes.length - first) / 4));
  return { first, view: new Uint32Array(bytes.buffer, bytes.byteOffset + first, count) };
}

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= ZERO && byte <= NINE;

/** Thrown inside the scanner only; `scanJson` turns it into its answer. */
class NotJson {
  constructor(
    readonly at: number,
    readonly problem: string,
    readonly tooDeep = false,
  ) {}
}

/**
 * Checks that bytes are one JSON text (RFC 8259, as `JSON.parse` takes it,
 * after a UTF-8 byte order mark if there is one) nesting at most `maxDepth`
 * arrays and objects, without building any value. UTF-8 validity is not
 * checked here (`isUtf8` does that faster).
 *
 * Linear in the bytes whatever they hold: `JSON.parse` of 5 MiB of
 * `{"k0":0,"k1":0,…}` (300,000 keys) or of empty objects takes 0.3 to
 * 0.8 s here, this 10 to 35 ms for any 5 MiB (bench/RESULTS.md at commit 2d24709, "Hostile
 * bodies"). No recursion: an open container is an entry in an array.
 */
export function scanJson(bytes: Uint8Array, maxDepth: number): JsonScan {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  try {
    return { ok: true, kind: new Scanner(bytes, start, maxDepth).text(), start };
  } catch (error) {
    if (!(error instanceof NotJson)) throw error;
    return { ok: false, at: error.at, problem: error.problem, tooDeep: error.tooDeep };
  }
}

class Scanner {
  /** One entry per open container: true for an object, false for an array. */
  private readonly open: boolean[] = [];

  constructor(
    private readonly bytes: Uint8Array,
    private at: number,
    private readonly maxDepth: number,
  ) {}

  /** The whole text: values, and after each the commas and closing brackets that follow it. */
  text(): JsonKind {
    const kind = this.kindAhead();
    for (;;) {
      if (this.valueOrOpening()) continue;
      if (!this.afterValue()) break;
    }
    this.skipWhitespace();
    if (this.at < this.bytes.length) throw this.unexpected('after the end of the JSON text');
    return kind;
  }

  private kindAhead(): JsonKind {
    this.skipWhitespace();
    const byte = this.bytes[this.at];
    if (byte === OPEN_BRACE) return 'object';
    if (byte === OPEN_BRACKET) return 'array';
    if (byte === QUOTE) return 'string';
    if (byte === 0x74 || byte === 0x66) return 'boolean';
    if (byte === 0x6e) return 'null';
    return 'number';
  }

  /**
   * A scalar or an empty container, whole (false); or the opening of a
   * container with members, and in an object the first key and its colon
   * (true: a value comes next).
   */
  private valueOrOpening(): boolean {
    this.skipWhitespace();
    const byte = this.bytes[this.at];
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      const isObject = byte === OPEN_BRACE;
      if (this.open.length === this.maxDepth) throw new NotJson(this.at, `nested deeper than ${this.maxDepth} levels`, true);
      this.at++;
      this.skipWhitespace();
      if (this.bytes[this.at] === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
        this.at++;
        return false;
      }
      this.open.push(isObject);
      if (isObject) this.key();
      return true;
    }
    if (byte === QUOTE) this.string();
    else if (byte === MINUS || isDigit(byte)) this.number();
    else this.literal(byte);
    return false;
  }

  /**
   * After a value: closes the containers that end here, and reads the comma
   * (and in an object the key and colon) before the next value (true); false
   * when the outermost value has ended.
   */
  private afterValue(): boolean {
    for (;;) {
      const depth = this.open.length;
      if (depth === 0) return false;
      const inObject = this.open[depth - 1] as boolean;
      this.skipWhitespace();
      const byte = this.bytes[this.at];
      if (byte === COMMA) {
        this.at++;
        if (inObject) this.key();
        return true;
      }
      if (byte !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET))
        throw this.unexpected(`where a comma or ${inObject ? '}' : ']'} belongs`);
      this.at++;
      this.open.pop();
    }
  }

  private key(): void {
    this.skipWhitespace();
    if (this.bytes[this.at] !== QUOTE) throw this.unexpected('where a key belongs');
    this.string();
    this.skipWhitespace();
    if (this.bytes[this.at] !== COLON) throw this.unexpected('where a colon belongs');
    this.at++;
  }

  private literal(byte: number | undefined): void {
    for (const [first, word] of LITERALS) {
      if (byte !== first) continue;
      for (let i = 1; i < word.length; i++) {
        if (this.bytes[this.at + i] !== word[i]) throw new NotJson(this.at, 'a misspelt true, false or null');
      }
      this.at += word.length;
      return;
    }
    throw this.unexpected('where a value belongs');
  }

  private string(): void {
    const { bytes } = this;
    let at = this.at + 1;
    for (;;) {
      const shortEnd = Math.min(bytes.length, at + SHORT_STRING);
      while (at < shortEnd && PLAIN[bytes[at] as number] === 1) at++;
      if (at === shortEnd) at = this.skipPlain(at);
      const byte = bytes[at];
      if (byte === QUOTE) break;
      if (byte !== BACKSLASH) {
        this.at = at;
        throw byte === undefined ? this.unexpected('inside a string') : new NotJson(at, 'a control character inside a string');
      }
      const escaped = bytes[at + 1] as number;
      if (escaped === 0x75) {
        for (let i = 2; i < 6; i++) {
          if (HEX_DIGIT[bytes[at + i] as number] !== 1) throw new NotJson(at, 'a bad \\u escape');
        }
        at += 6;
      } else if (SIMPLE_ESCAPE[escaped] === 1) {
        at += 2;
      } else {
        throw new NotJson(at, 'a bad escape');
      }
    }
    this.at = at + 1;
  }

  /** The bytes as 32-bit words, from the first index whose address is a multiple of 4 (made on the first long string). */
  private words: { first: number; view: Uint32Array } | undefined;

  /**
   * The first index from `at` on whose byte is not PLAIN, or the end: four
   * bytes at a time (each word tested at once for a control byte, `"` and
   * `\`), then byte by byte from the word that has one. A 1 MiB string
   * took 1.3 ms a byte at a time (docs/decisions/json-scan.md).
   */
  private skipPlain(from: number): number {
    const { bytes } = this;
    let at = from;
    this.words ??= wordsOf(bytes);
    const { first, view } = this.words;
    while (at < bytes.length && (at < first || (at - first) % 4 !== 0) && PLAIN[bytes[at] as number] === 1) at++;
    if (at >= first && (at - first) % 4 === 0) {
      let word = (at - first) / 4;
      while (word < view.length && plainWord(view[word] as number)) word++;
      at = first + word * 4;
    }
    while (at < bytes.length && PLAIN[bytes[at] as number] === 1) at++;
    return at;
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
  private number(): void {
    const { bytes } = this;
    const begin = this.at;
    let at = this.at;
    if (bytes[at] === MINUS) at++;
    if (bytes[at] === ZERO) at++;
    else if (isDigit(bytes[at])) while (isDigit(bytes[at])) at++;
    else throw new NotJson(begin, 'a malformed number');
    if (bytes[at] === DOT) {
      at++;
      if (!isDigit(bytes[at])) throw new NotJson(begin, 'a malformed number');
      while (isDigit(bytes[at])) at++;
    }
    if (bytes[at] === 0x65 || bytes[at] === 0x45) {
      at++;
      if (bytes[at] === PLUS || bytes[at] === MINUS) at++;
      if (!isDigit(bytes[at])) throw new NotJson(begin, 'a malformed number');
      while (isDigit(bytes[at])) at++;
    }
    this.at = at;
  }

  private skipWhitespace(): void {
    const { bytes } = this;
    let at = this.at;
    while (at < bytes.length && WHITESPACE[bytes[at] as number] === 1) at++;
    this.at = at;
  }

  private unexpected(where: string): NotJson {
    const byte = this.bytes[this.at];
    if (byte === undefined) return new NotJson(this.at, 'the text ends early');
    const shown = byte > 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`;
    return new NotJson(this.at, `unexpected ${shown} ${where}`);
  }
}
