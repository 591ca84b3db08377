// How times and sizes read on the page.

const absolute = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** "Nov 22, 2026, 01:02:03.456" in the viewer's time zone, plus the milliseconds. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${absolute.format(date)}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * What a time says on hover: the local time with seconds, then the ISO UTC
 * value the API wrote ("Nov 22, 2026, 02:02:03.456 local · 2026-11-22T01:02:03.456Z").
 */
export function timeTitle(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${formatTime(iso)} local · ${date.toISOString()}`;
}

/** "just now", "5 s ago", "3 min ago", "2 h ago", "4 d ago", then the date. */
export function relativeTime(iso: string, now = Date.now()): string {
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days < 30) return `${days} d ago`;
  return new Date(iso).toLocaleDateString();
}

/** A run time: "0.41 ms", "12.3 ms", "108 ms". */
export function formatDuration(ms: number): string {
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms)} ms`;
}

/** "812 B", "4.2 KiB", "1.5 MiB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The media type without parameters: "application/json". */
export function shortContentType(contentType: string): string {
  return contentType.split(';')[0]?.trim() || 'no content type';
}

/** A one-line glimpse of the body for the list. */
export function bodyPreview(body: unknown, max = 120): string {
  if (body === null || body === undefined) return '';
  if (typeof body === 'string') {
    // Text and XML bodies (CONTRACT 9): their start, on one line.
    const start = body
      .slice(0, max + 1)
      .replace(/\s+/g, ' ')
      .trim();
    return start.length > max ? `${start.slice(0, max)}…` : start;
  }
  let text: string;
  try {
    text = JSON.stringify(body) ?? '';
  } catch {
    return '';
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
