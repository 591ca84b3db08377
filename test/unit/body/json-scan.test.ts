import { describe, expect, it } from 'vitest';
import { scanJson, type JsonKind } from '../../../src/body/json-scan.js';

/** What `JSON.parse` says of a text: its top-level kind, or undefined when it refuses it. */
function parsedKind(text: string): JsonKind | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonKind;
}

function scannedKind(text: string): JsonKind | undefined {
  const scan = scanJson(Buffer.from(text, 'utf8'), 1000);
  return scan.ok ? scan.kind : undefined;
}

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

describe('scanJson agrees with JSON.parse', () => {
  it.each([
    '{}',
    '[]',
    '{"a":1}',
    ' \t\r\n{ "a" : [ 1 , 2 ] } \n',
    '"text"',
    '0',
    '-0',
    '12',
    '-12.5e-3',
    '1E+2',
    '0.0e0',
    'true',
    'false',
    'null',
    '[[],{},[{}]]',
    '{"a":{"b":{"c":[]}}}',
    '"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00"',
    '{"__proto__":1,"a":1,"a":2}',
    '"é 漢字 😀"',
    '[1,"x",true,null,{"k":[false]}]',
  ])('accepts %j as JSON.parse does, with the same kind', (text) => {
    expect(scannedKind(text)).toBe(parsedKind(text));
    expect(scannedKind(text)).not.toBeUndefined();
  });

  it.each([
    '',
    ' ',
    '{',
    '}',
    '[',
    '{"a"}',
    '{"a":}',
    '{"a":1,}',
    '[1,]',
    '[,1]',
    '{,}',
    '{"a" 1}',
    '{a:1}',
    "{'a':1}",
    '-',
    '--1',
    '+1',
    '01',
    '-01',
    '1.',
    '.5',
    '1e',
    '1e+',
    '1.e5',
    '0x10',
    'NaN',
    'Infinity',
    '-Infinity',
    'tru',
    'nul',
    'falsey',
    'True',
    '"abc',
    '"\\x"',
    '"\\u12G4"',
    '"\\u123"',
    '"a\u0001b"',
    '"a\nb"',
    '"\t"',
    '{"a":1}x',
    '[1] [2]',
    '1 2',
    '\u000b{}',
    '\f{}',
    '{}\u00a0',
    '{"a":1}}',
    '[1]]',
    '{"a":[1}',
    '[{"a":1]}',
  ])('refuses %j as JSON.parse does', (text) => {
    expect(parsedKind(text)).toBeUndefined();
    expect(scannedKind(text)).toBeUndefined();
  });

  it('agrees on 100,000 mutated texts', () => {
    const seeds = [
      '{"a":1}',
      '[1,2,{"b":[true,false,null]}]',
      '"x\\u00e9\\n"',
      '-0.5e+10',
      '{"k":{"l":[[],{}]}, "m":"\\"\\\\"}',
      ' {\n"a" : [ 1 , 2 ] } ',
      '0',
      '1E5',
      'true',
    ];
    const alphabet = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      'u',
      '0',
      '1',
      '9',
      '-',
      '+',
      '.',
      'e',
      'E',
      ' ',
      '\n',
      '\t',
      't',
      'r',
      'n',
      'f',
      'a',
      'l',
      's',
      'x',
      '\u0001',
      'é',
      'A',
    ];
    const next = random(20261123);
    const pick = <T>(list: readonly T[]): T => list[next(list.length)] as T;
    let accepted = 0;
    const disagreements: string[] = [];
    for (let round = 0; round < 100_000; round++) {
      let text = pick(seeds);
      for (let edits = 1 + next(4); edits > 0; edits--) {
        const at = next(text.length + 1);
        const op = next(3);
        if (op === 0) text = text.slice(0, at) + pick(alphabet) + text.slice(at);
        else if (op === 1) text = text.slice(0, at) + text.slice(at + 1);
        else text = text.slice(0, at) + pick(seeds) + text.slice(at);
      }
      const expected = parsedKind(text);
      if (expected !== undefined) accepted++;
      if (scannedKind(text) !== expected) disagreements.push(text);
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    // Both sides of the grammar were exercised.
    expect(accepted).toBeGreaterThan(5_000);
    expect(accepted).toBeLessThan(95_000);
  });
});

describe('scanJson', () => {
  it('finds a control byte, a quote or a backslash at any place in a long string, at any alignment of the bytes', () => {
    // Strings past 32 bytes are read four bytes at a time: every place in a word, and every offset of the buffer.
    const disagreements: string[] = [];
    const inserts = ['\u0001', '\u001f', '\\"', '\\n', '\\u00e9', '\\x', '"', '\\', 'é', '\u007f'];
    for (let length = 28; length < 48; length++) {
      for (let place = 0; place <= length; place++) {
        for (const insert of inserts) {
          const text = `{"k":"${'a'.repeat(place)}${insert}${'b'.repeat(length - place)}"}`;
          for (let offset = 0; offset < 4; offset++) {
            const bytes = Buffer.concat([Buffer.alloc(offset, 0x20), Buffer.from(text, 'utf8')]).subarray(offset);
            const scan = scanJson(bytes, 1000);
            const expected = parsedKind(text) !== undefined;
            if (scan.ok !== expected) disagreements.push(`${JSON.stringify(text)} at offset ${offset}`);
          }
        }
      }
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
  });

  it('says where the control byte of a long string is', () => {
    const text = `{"k":"${'a'.repeat(1000)}\u0002${'b'.repeat(1000)}"}`;
    expect(scanJson(Buffer.from(text), 1000)).toMatchObject({
      ok: false,
      at: 6 + 1000,
      problem: 'a control character inside a string',
    });
  });

  it('skips a UTF-8 byte order mark and says where the text starts', () => {
    const raw = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
    expect(scanJson(raw, 10)).toEqual({ ok: true, kind: 'object', start: 3 });
    expect(scanJson(Buffer.from('{"a":1}'), 10)).toEqual({ ok: true, kind: 'object', start: 0 });
  });

  it('counts nesting, objects and arrays alike, and says when it is too deep', () => {
    expect(scanJson(Buffer.from('[{"a":[1]}]'), 3).ok).toBe(true);
    expect(scanJson(Buffer.from('[{"a":[1]}]'), 2)).toEqual({
      ok: false,
      at: 6,
      problem: 'nested deeper than 2 levels',
      tooDeep: true,
    });
  });

  it('refuses a million open brackets without overflowing the stack', () => {
    expect(scanJson(Buffer.from('['.repeat(1_000_000)), 1_000_000)).toMatchObject({ ok: false, tooDeep: false });
  });

  it('checks half a million keys, which JSON.parse takes a long time over', () => {
    const keys = Array.from({ length: 500_000 }, (_, i) => `"k${i}":${i}`);
    expect(scanJson(Buffer.from(`{${keys.join(',')}}`), 1000)).toEqual({ ok: true, kind: 'object', start: 0 });
    expect(scanJson(Buffer.from(`{${keys.join(',')},}`), 1000).ok).toBe(false);
  });
});
