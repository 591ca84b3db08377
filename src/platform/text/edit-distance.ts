/** Levenshtein distance, for "did you mean" hints (the names compared are short: tens of characters). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidate nearest to `name` within `maxEdits` edits, letter case
 * ignored (the first of several as near); undefined when none is that near.
 */
export function nearestWithin(name: string, candidates: Iterable<string>, maxEdits: number): string | undefined {
  const lower = name.toLowerCase();
  let nearest: string | undefined;
  let best = maxEdits + 1;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < best) {
      nearest = candidate;
      best = distance;
    }
  }
  return nearest;
}

/** A name as people vary it: lower case, without `-` and `_` (`timeout_ms`, `Timeout-Ms` and `timeoutMs` are one). */
function plain(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/** The English singular of a plural name (`retries` → `retry`, `headers` → `header`); others as they are. */
function singular(name: string): string {
  if (/[^aeiou]ies$/.test(name)) return `${name.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh)es$/.test(name)) return name.slice(0, -2);
  if (/[^s]s$/.test(name)) return name.slice(0, -1);
  return name;
}

/**
 * The name that `typed` probably means, for "did you mean" on setting
 * names; undefined when none is near enough to say. In this order:
 * - the same name written otherwise (case, `-`, `_`), or its singular or
 *   plural (`retries` for `retry`, `header` for `headers`);
 * - the nearest within a number of edits that grows with the length:
 *   1 up to 4 letters, 2 up to 8, 3 beyond (`foo` is not `to`);
 * - the only name that begins the other, when the shorter has 4 letters
 *   or more and half the longer's (`timeout` for `timeoutMs`).
 * Edit distance alone misses plurals (`retries` is 3 edits from `retry`).
 */
export function nearName(typed: string, candidates: Iterable<string>): string | undefined {
  const names = [...candidates];
  const key = plain(typed);
  if (key === '' || key.length > 40) return undefined;
  const one = singular(key);
  const same = names.find((name) => {
    const other = plain(name);
    return other === key || singular(other) === one;
  });
  if (same !== undefined) return same;
  const edits = key.length <= 4 ? 1 : key.length <= 8 ? 2 : 3;
  let nearest: string | undefined;
  let best = edits + 1;
  for (const name of names) {
    const other = plain(name);
    const distance = Math.min(editDistance(key, other), editDistance(one, singular(other)));
    if (distance < best) {
      nearest = name;
      best = distance;
    }
  }
  if (nearest !== undefined) return nearest;
  const begun = names.filter((name) => {
    const other = plain(name);
    const [shorter, longer] = other.length < key.length ? [other, key] : [key, other];
    return shorter.length >= 4 && shorter.length * 2 >= longer.length && longer.startsWith(shorter);
  });
  return begun.length === 1 ? begun[0] : undefined;
}
