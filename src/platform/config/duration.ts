export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: MINUTE_MS,
  h: HOUR_MS,
  d: 86_400_000,
  w: 604_800_000,
};

/** Parses durations such as `500ms`, `90s`, `15m`, `12h`, `30d`, `2w` into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h|d|w)$/.exec(text.trim());
  if (match === null) return undefined;
  const [, amount, unit] = match;
  const factor = UNITS[unit ?? ''];
  if (amount === undefined || factor === undefined) return undefined;
  const ms = Number(amount) * factor;
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}
