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
