// Names that mix scripts: `ѕtripe` starts with a Cyrillic letter and reads
// as `stripe`. A name whose letters come from more than one script (save the
// mixes that languages use, below) is marked where it is shown, so that a
// sender cannot pass one source off as another.
//
// Imports nothing and uses nothing of Node: the web page bundles it.

/**
 * Scripts told apart, by their Unicode names (`\p{Script=…}`): the
 * alphabets that look like Latin (Greek, Cyrillic, Armenian, Cherokee,
 * Coptic, Glagolitic…) and the other scripts in wide use. A letter of any
 * other script counts as one script of its own ("another script"); digits,
 * punctuation and symbols (Common) and combining marks (Inherited) count as
 * none.
 */
const SCRIPT_NAMES = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Georgian',
  'Cherokee',
  'Coptic',
  'Glagolitic',
  'Gothic',
  'Old_Italic',
  'Runic',
  'Ogham',
  'Deseret',
  'Osage',
  'Lisu',
  'Vai',
  'Tifinagh',
  'Nko',
  'Adlam',
  'Canadian_Aboriginal',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Ethiopic',
  'Mongolian',
  'Tibetan',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Myanmar',
  'Khmer',
  'Han',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Hangul',
  'Yi',
] as const;

const SCRIPTS = SCRIPT_NAMES.map((name) => ({ name: name.replace(/_/g, ' '), test: new RegExp(`^\\p{Script=${name}}$`, 'u') }));
const NEUTRAL = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
const OTHER = 'another script';

/** Mixes that whole languages write with, and so are not marked (the "highly restrictive" level of Unicode TS #39). */
const ALLOWED_MIXES: ReadonlyArray<ReadonlySet<string>> = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

/** The scripts of the letters of `text`, in the order they first appear. */
export function scriptsOf(text: string): string[] {
  const found: string[] = [];
  for (const char of text) {
    if (NEUTRAL.test(char)) continue;
    const script = SCRIPTS.find((candidate) => candidate.test.test(char))?.name ?? OTHER;
    if (!found.includes(script)) found.push(script);
  }
  return found;
}

/** The scripts a name mixes, when it mixes them in a way that no language does; undefined otherwise. */
export function mixedScripts(text: string): string[] | undefined {
  const scripts = scriptsOf(text);
  if (scripts.length <= 1) return undefined;
  if (ALLOWED_MIXES.some((allowed) => scripts.every((script) => allowed.has(script)))) return undefined;
  return scripts;
}
