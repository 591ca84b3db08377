import { parseDuration } from './duration.js';

/**
 * How one setting's text is read: a parser, the default as the docs show it,
 * and the range it accepts. The settings table (`settings-table.ts`) gives
 * each setting one of these.
 */
export interface SettingKind<T> {
  /**
   * Reads the variable's value as set (undefined when unset). A bad value is
   * told to `problem`, without the variable's name (the caller adds it); the
   * value returned then is never used.
   */
  parse(raw: string | undefined, problem: (text: string) => void): T;
  /** The default as `--help` and the README write it; undefined when an unset setting is none (the table says what that means). */
  fallback?: string;
}

/** A problem with the value, or undefined when it is good. */
type Check = (value: string) => string | undefined;

/** The trimmed value; blank counts as unset. */
function trimmed(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function checked(value: string, check: Check | undefined, problem: (text: string) => void): void {
  const complaint = check?.(value);
  if (complaint !== undefined) problem(complaint);
}

/** A whole number from `min` to `max`. */
export function integer(fallback: number, min: number, max: number): SettingKind<number> {
  return {
    fallback: String(fallback),
    parse(raw, problem) {
      const text = trimmed(raw);
      if (text === undefined) return fallback;
      const value = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
        problem(`expected a whole number from ${min} to ${max}, got "${text}".`);
        return fallback;
      }
      return value;
    },
  };
}

/** Text with a default, trimmed; `check` refuses a bad one (the default too, were it bad). */
export function text(fallback: string, check?: Check): SettingKind<string> {
  return {
    fallback,
    parse(raw, problem) {
      const value = trimmed(raw) ?? fallback;
      checked(value, check, problem);
      return value;
    },
  };
}

/** Text without a default, trimmed: undefined when unset. */
export function optionalText(check?: Check): SettingKind<string | undefined> {
  return {
    parse(raw, problem) {
      const value = trimmed(raw);
      if (value !== undefined) checked(value, check, problem);
      return value;
    },
  };
}

/** One of a few words, exactly as written (after trimming). */
export function oneOf<const T extends string>(values: readonly T[], fallback: T): SettingKind<T> {
  const expected = values.length === 2 ? `"${values[0] ?? ''}" or "${values[1] ?? ''}"` : `one of ${values.join(', ')}`;
  const isValue = (value: string): value is T => (values as readonly string[]).includes(value);
  return {
    fallback,
    parse(raw, problem) {
      const value = trimmed(raw) ?? fallback;
      if (isValue(value)) return value;
      problem(`expected ${expected}, got "${value}".`);
      return fallback;
    },
  };
}

/**
 * A comma-separated list, each item trimmed, empty items dropped. Unlike the
 * other kinds, a variable set to an empty value is an empty list, not unset:
 * it is how the default list is turned off.
 */
export function list(fallback: readonly string[], check?: Check): SettingKind<string[]> {
  return {
    // An empty default is none, and the table says what that means.
    ...(fallback.length === 0 ? {} : { fallback: fallback.join(',') }),
    parse(raw, problem) {
      if (raw === undefined) return [...fallback];
      const items = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0);
      for (const item of items) checked(item, check, problem);
      return items;
    },
  };
}

/** A duration (`30d`, `12h`, `90m`), in ms, with a default written the same way. */
export function durationOr(fallback: string): SettingKind<number> {
  const fallbackMs = parseDuration(fallback);
  if (fallbackMs === undefined) throw new Error(`bad default duration "${fallback}"`);
  return {
    fallback,
    parse(raw, problem) {
      const value = trimmed(raw);
      if (value === undefined) return fallbackMs;
      const ms = parseDuration(value);
      if (ms === undefined) {
        problem(`expected a duration such as "7d", "12h" or "90m", got "${value}".`);
        return fallbackMs;
      }
      return ms;
    },
  };
}

/** A duration (`30d`, `12h`, `90m`), in ms; undefined when unset. */
export function duration(): SettingKind<number | undefined> {
  return {
    parse(raw, problem) {
      const value = trimmed(raw);
      if (value === undefined) return undefined;
      const ms = parseDuration(value);
      if (ms === undefined) problem(`expected a duration such as "30d", "12h" or "90m", got "${value}".`);
      return ms;
    },
  };
}

/** `kind`, its value passed through `map` (a path made absolute, names in lower case). */
export function mapped<T, U>(kind: SettingKind<T>, map: (value: T) => U): SettingKind<U> {
  return {
    ...(kind.fallback === undefined ? {} : { fallback: kind.fallback }),
    parse: (raw, problem) => map(kind.parse(raw, problem)),
  };
}
