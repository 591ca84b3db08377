import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/** Where in the file a problem is: 1-based, as editors count. */
export interface FilePosition {
  line: number;
  column: number;
}

/** A key path's leading part, as the config's problems begin: `sources.stripe.verify`, `sources["a b"].anyJson`. */
const PATH_AT_START = /^((?:[\w-]+|\["(?:[^"\\]|\\.)*"\])(?:\.[\w-]+|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*)(?: \([^)]*\))?: /;
const PATH_PART = /\.?([\w-]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g;

/** The keys of the path a problem begins with (`sources.stripe.verify.scheme: …`); none when it names none. */
export function problemPath(problem: string): string[] {
  const path = PATH_AT_START.exec(problem)?.[1];
  if (path === undefined) return [];
  const keys: string[] = [];
  for (const match of path.matchAll(PATH_PART)) {
    const [, word, index, quoted] = match;
    if (word !== undefined) keys.push(word);
    else if (index !== undefined) keys.push(index);
    else if (quoted !== undefined) keys.push(JSON.parse(quoted) as string);
  }
  return keys;
}

/**
 * The place in the file that a key path names: the key itself when it is
 * there, else the nearest key above it that is (a required key that is
 * missing points at the map that lacks it). Undefined for the top level.
 */
export function positionOfPath(document: Document, lineCounter: LineCounter, keys: readonly string[]): FilePosition | undefined {
  let node: unknown = document.contents;
  let offset: number | undefined;
  for (const key of keys) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
      if (pair === undefined) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && /^\d+$/.test(key)) {
      const item = node.items[Number(key)] as Node | undefined;
      if (item === undefined) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
  }
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}
