// A forward's attempts as a table: when each started (the absolute time),
// the HTTP status, how long it took, the error, and an excerpt of what the
// destination answered (CONTRACT 6: its headers and the first 4 KiB of its
// body, kept with the attempt). The whole answer opens under its attempt.
// Everything the destination said goes in as text, never HTML: the answer is
// the destination's, hostile or not. When a route's transform ran for an
// attempt (CONTRACT 10), a Transform column shows it as name@version.

import { h } from './dom.ts';
import { bodyPreview, formatTime, timeTitle } from './format.ts';
import type { AttemptInfo } from './forwarding-api.ts';

/** How much of an answer's body its attempt's row shows. */
const EXCERPT_CHARS = 120;

const COLUMNS = ['#', 'Started', 'HTTP status', 'Duration', 'Transform', 'Error', 'Answer'] as const;
type Column = (typeof COLUMNS)[number];

/** The columns shown: Transform only when some attempt ran one. */
function columnsFor(attempts: readonly AttemptInfo[]): Column[] {
  const transformed = attempts.some((attempt) => attempt.transform !== null);
  return COLUMNS.filter((column) => column !== 'Transform' || transformed);
}

/** The transform that ran for an attempt, as name@version (the version: the first 12 hex digits of its code's SHA-256). */
function transformCell(attempt: AttemptInfo): HTMLTableCellElement {
  const transform = attempt.transform;
  if (transform === null) return cell('Transform', 'transform muted', '—');
  return cell(
    'Transform',
    'transform',
    h(
      'code',
      { attrs: { title: `transform ${transform.name}, version ${transform.version}` } },
      `${transform.name}@${transform.version}`,
    ),
  );
}

/** A cell that names its column, so that a phone can show it as a labelled line (forwarding.css). */
function cell(column: Column, className: string, ...content: Array<Node | string>): HTMLTableCellElement {
  return h('td', { class: className, attrs: { 'data-label': column } }, ...content);
}

/** The row's glimpse of the answer: its body on one line, cut short; or why there is none. */
function excerpt(attempt: AttemptInfo): HTMLElement {
  const response = attempt.response;
  if (response === null) return h('span', { class: 'muted' }, 'no answer');
  if (response.body === '') return h('span', { class: 'muted' }, 'empty body');
  const shown = bodyPreview(response.body, EXCERPT_CHARS);
  return h('span', { class: 'answer-excerpt' }, response.bodyTruncated && !shown.endsWith('…') ? `${shown}…` : shown);
}

/** The whole answer to one attempt, closed until asked for: headers in order, then the body. */
function fullAnswer(attempt: AttemptInfo): HTMLElement | null {
  const response = attempt.response;
  if (response === null) return null;
  const bytes = new TextEncoder().encode(response.body).length;
  const size = `${bytes.toLocaleString()} bytes${response.bodyTruncated ? ', the first 4 KiB of a longer body' : ''}`;
  return h(
    'details',
    { class: 'attempt-answer', attrs: { 'data-n': String(attempt.n) } },
    h(
      'summary',
      {},
      `Full answer to attempt ${attempt.n}`,
      h('span', { class: 'muted' }, ` · HTTP ${attempt.status ?? '—'} · ${size}`),
    ),
    response.headers.length === 0
      ? null
      : h(
          'table',
          { class: 'kv-table answer-headers', attrs: { 'aria-label': `Headers of the answer to attempt ${attempt.n}` } },
          h(
            'tbody',
            {},
            ...response.headers.map(([name, value]) =>
              h('tr', {}, h('th', { attrs: { scope: 'row' } }, name), h('td', {}, value)),
            ),
          ),
        ),
    response.body === '' ? h('p', { class: 'muted' }, 'No body.') : h('pre', { class: 'raw-body answer-body' }, response.body),
  );
}

function attemptRows(attempt: AttemptInfo, columns: readonly Column[]): HTMLTableRowElement[] {
  const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
  const row = h(
    'tr',
    { class: 'attempt', attrs: { 'data-n': String(attempt.n) } },
    cell('#', 'n', String(attempt.n)),
    cell(
      'Started',
      'started',
      h('time', { attrs: { datetime: attempt.startedAt, title: timeTitle(attempt.startedAt) } }, formatTime(attempt.startedAt)),
    ),
    cell('HTTP status', `status ${ok ? 'ok' : 'bad'}`, attempt.status === null ? '—' : String(attempt.status)),
    cell('Duration', 'duration', `${attempt.durationMs.toLocaleString()} ms`),
    columns.includes('Transform') ? transformCell(attempt) : null,
    cell('Error', 'error', attempt.error ?? ''),
    cell('Answer', 'answer', excerpt(attempt)),
  );
  const full = fullAnswer(attempt);
  if (full === null) return [row];
  const answerRow = h(
    'tr',
    { class: 'attempt-answer-row', attrs: { 'data-n': String(attempt.n) } },
    h('td', { attrs: { colspan: String(columns.length) } }, full),
  );
  return [row, answerRow];
}

/** The attempts of one forward, oldest first, in a box that scrolls sideways rather than squeeze a column. */
export function attemptsTable(attempts: readonly AttemptInfo[]): HTMLElement {
  const columns = columnsFor(attempts);
  return h(
    'div',
    { class: 'table-scroll attempts-scroll' },
    h(
      'table',
      { class: 'kv-table attempts-table' },
      h('thead', {}, h('tr', {}, ...columns.map((label) => h('th', { attrs: { scope: 'col' } }, label)))),
      h('tbody', {}, ...attempts.flatMap((attempt) => attemptRows(attempt, columns))),
    ),
  );
}
