/**
 * An RFC 3339 date-time (`2026-11-22T01:02:03.456Z`, `…+02:00`; `t`, `z`
 * and a space in place of `T` too) as milliseconds since the epoch, or
 * undefined when the text is not one: a date must be on the calendar
 * (`Date.parse` reads 2026-02-30 as March 2nd) and a time on the clock
 * (no leap second: JavaScript's clock has none). Digits past the
 * millisecond are dropped.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export function parseRfc3339(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (match[8] === undefined) {
    const hours = Number(match[10]);
    const minutes = Number(match[11]);
    if (hours > 23 || minutes > 59) return undefined;
    offset = (match[9] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  return utc.getTime() - offset;
}
