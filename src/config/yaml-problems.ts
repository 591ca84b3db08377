import {
  isCollection,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Document,
  type ErrorCode,
  type Node,
  type YAMLError,
} from 'yaml';
import { positionOfPath, type FilePosition } from './config-positions.js';
import { childPath, mayName } from './key-names.js';

/** A problem with the file, and where it is when that is known. */
export interface LocatedProblem {
  problem: string;
  at?: FilePosition;
}

/** The file read: its data, and where each key path of it stands (for the problems found later). */
export interface ReadYaml {
  data: unknown;
  locate: (keys: readonly string[]) => FilePosition | undefined;
}

/**
 * The config file's YAML (or JSON) as plain data, or the problems that keep
 * it from being read, each with its line and column.
 *
 * Never the parser's own messages: they quote the file, and the text they
 * quote can be a secret (an unquoted `*secret` is an alias of an anchor that
 * does not exist, `!my!secret` a tag, `|secret` a block scalar header, and the
 * parser names each in full). A problem here is said in words of our own, by
 * the parser's error code.
 */
export function readYaml(text: string): ReadYaml | { problems: LocatedProblem[] } {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { uniqueKeys: false, logLevel: 'silent', lineCounter, keepSourceTokens: true });
  const position = (offset: number): FilePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const shown = ({ line, column }: FilePosition): string => `line ${line}, column ${column}`;
  const invalid = (offset: number, what: string): LocatedProblem => ({
    problem: `the file is not valid YAML or JSON: ${what}`,
    at: position(offset),
  });
  const reported = [...document.errors, ...document.warnings];
  const problems = reported.map((error) => syntaxProblem(document, error, invalid, (offset) => shown(position(offset))));
  const said = new Set(reported.map((error) => error.pos[0]));
  problems.push(
    ...unresolvedAliases(document)
      .filter((offset) => !said.has(offset))
      .map((offset) => invalid(offset, ALIAS_PROBLEM)),
  );
  problems.push(
    ...duplicateKeys(document).map(({ path, offset }) => ({
      problem: `${path}: the key is there twice (again at ${shown(position(offset))})`,
      at: position(offset),
    })),
  );
  if (problems.length > 0) return { problems: distinct(problems) };
  try {
    return {
      data: document.toJS({ maxAliasCount: 100 }) as unknown,
      locate: (keys) => positionOfPath(document, lineCounter, keys),
    };
  } catch {
    // toJS refuses only aliases, which are checked above, and too many of them.
    return { problems: [{ problem: 'the file uses YAML aliases ("*name") too often (over 100 expansions)' }] };
  }
}

/** One of each problem said at the same place (an unclosed bracket is reported by several of the parser's errors). */
function distinct(problems: LocatedProblem[]): LocatedProblem[] {
  const seen = new Set<string>();
  return problems.filter(({ problem, at }) => {
    const key = `${at?.line ?? ''}:${at?.column ?? ''}:${problem.replace(/ \(noticed at [^)]*\)$/, '')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A parser error in our words, at the place to fix: a "{" or "[" that is
 * never closed is noticed where the parser gave up (often the next key,
 * lines below); it is pointed at where it was opened, and the place where
 * the parser noticed is said too.
 */
function syntaxProblem(
  document: Document,
  error: YAMLError,
  invalid: (offset: number, what: string) => LocatedProblem,
  shown: (offset: number) => string,
): LocatedProblem {
  const what = DESCRIPTIONS[error.code] ?? `a YAML problem (${error.code})`;
  const opened =
    error.code === 'BAD_INDENT' || error.code === 'MISSING_CHAR' ? unclosedFlowBefore(document, error.pos[0]) : undefined;
  if (opened === undefined) return invalid(error.pos[0], what);
  const bracket = opened.isMap ? '"{" that is not closed with "}"' : '"[" that is not closed with "]"';
  return invalid(opened.offset, `a ${bracket} (noticed at ${shown(error.pos[0])})`);
}

/** The innermost flow collection ({…} or […]) that starts before `offset` and whose closing bracket is missing. */
function unclosedFlowBefore(document: Document, offset: number): { offset: number; isMap: boolean } | undefined {
  let found: { offset: number; isMap: boolean } | undefined;
  visit(document, {
    Node(_, node) {
      if (!isCollection(node) || node.flow !== true || node.range === undefined || node.range === null) return;
      const [start, valueEnd] = node.range;
      if (start >= offset) return;
      // The tokens that end it (kept with keepSourceTokens) hold its own closing bracket, or it was never closed.
      const closer = isMap(node) ? '}' : ']';
      const ends = node.srcToken?.type === 'flow-collection' ? node.srcToken.end : [];
      const closed = ends.some((token) => token.source === closer);
      if (!closed && valueEnd <= offset + 1 && (found === undefined || start > found.offset))
        found = { offset: start, isMap: isMap(node) };
    },
  });
  return found;
}

const QUOTE_IT = 'a value that begins with one of * & ! | > % @ ` { [ must be quoted';
/** Found by our own check (`unresolvedAliases`): the parser leaves aliases of anchors that are not set to `toJS`, whose message names them. */
const ALIAS_PROBLEM = `an alias ("*…") of an anchor that is not set; ${QUOTE_IT}`;

const DESCRIPTIONS: Partial<Record<ErrorCode, string>> = {
  BAD_ALIAS: `an anchor ("&") or alias ("*") without a name; ${QUOTE_IT}`,
  TAG_RESOLVE_FAILED: `an unknown tag; ${QUOTE_IT}`,
  BAD_SCALAR_START: `a value that YAML cannot start with; ${QUOTE_IT}`,
  UNEXPECTED_TOKEN: `something YAML did not expect here; ${QUOTE_IT}`,
  MISSING_CHAR: 'a bracket, brace or quote that is not closed',
  BAD_INDENT: 'wrong indentation',
  TAB_AS_INDENT: 'a tab as indentation (YAML takes spaces only)',
  MULTIPLE_DOCS: 'more than one YAML document',
  BAD_DQ_ESCAPE: 'a bad escape in a double-quoted string',
  BLOCK_IN_FLOW: 'a block ("- item" or "key: value" lines) inside "[…]" or "{…}"',
  MULTILINE_IMPLICIT_KEY: 'a key that runs over more than one line (a missing colon?)',
};

/** Keys that a map holds twice (YAML and JSON refuse them; a parser would keep the last), by their key path. */
function duplicateKeys(document: Document): Array<{ path: string; offset: number }> {
  const found: Array<{ path: string; offset: number }> = [];
  const walk = (node: unknown, path: readonly string[]): void => {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        if (key !== undefined && seen.has(key))
          found.push({ path: shownPath([...path, key]), offset: (pair.key as Node).range?.[0] ?? 0 });
        if (key !== undefined) seen.add(key);
        walk(pair.value, [...path, key ?? '?']);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => walk(item, [...path, String(index)]));
    }
  };
  walk(document.contents, []);
  return found;
}

/**
 * A key path as a message may show it: `sources.stripe.verify`. Inside a
 * source, it stops before a key that may be a secret (`mayName`), and says so.
 */
function shownPath(keys: readonly string[]): string {
  let path = '';
  for (const [index, key] of keys.entries()) {
    // A source's name is shown: it is in every URL the source is sent to.
    const sourceName = keys[0] === 'sources' && index === 1;
    if (!sourceName && !mayName(keys.slice(0, index).join('.'), key))
      return `${path || '(top level)'} (a key inside, not shown: it may be a secret)`;
    path = childPath(path, key);
  }
  return path;
}

/** Where aliases stand whose anchor is not set before them. */
function unresolvedAliases(document: Document): number[] {
  const offsets: number[] = [];
  visit(document, {
    Alias(_, alias) {
      if (alias.resolve(document) === undefined) offsets.push(alias.range?.[0] ?? 0);
    },
  });
  return offsets;
}
