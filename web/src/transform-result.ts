// What one try of a transform answered (CONTRACT 10 "Try it"), as the page
// shows it: the body the route would send (JSON pretty, a string as text),
// the headers it adds, or "dropped"; or the error; then the console lines,
// the time and the version. The body, the headers, the logs and the error
// are the transform's and the delivery's, hostile or not: all go in as text
// (dom.ts), never as HTML.

import { h } from './dom.ts';
import { formatDuration } from './format.ts';
import type { TransformRun } from './transforms-api.ts';

type Output = Exclude<Extract<TransformRun, { output: unknown }>['output'], null>;

/** The answer of a run of `transform`, under its route's button. */
export function transformResult(transform: string, run: TransformRun): HTMLElement {
  const outcome = 'error' in run ? 'failed' : run.output === null ? 'dropped' : 'output';
  return h(
    'div',
    { class: `transform-result transform-${outcome}`, attrs: { 'data-outcome': outcome } },
    h(
      'p',
      { class: 'transform-run-meta muted' },
      `${transform} version `,
      h('code', { class: 'transform-version' }, run.version),
      ' · ',
      h('span', { class: 'transform-duration' }, formatDuration(run.durationMs)),
      ' · nothing was sent',
    ),
    ...('error' in run
      ? [h('p', { class: 'error transform-error' }, 'Failed: ', h('span', { class: 'transform-error-text' }, run.error))]
      : run.output === null
        ? [h('p', { class: 'transform-dropped' }, 'dropped (the transform returned null): nothing is sent on this route')]
        : outputParts(run.output)),
    h('h4', {}, 'console.log'),
    run.logs.length === 0
      ? h('p', { class: 'muted transform-no-logs' }, '(nothing)')
      : h(
          'ol',
          { class: 'transform-logs', attrs: { 'aria-label': 'console.log lines' } },
          ...run.logs.map((line) => h('li', {}, line)),
        ),
  );
}

function outputParts(output: Output): HTMLElement[] {
  const headers = Object.entries(output.headers ?? {});
  return [
    h('h4', {}, 'Body'),
    ...bodyParts(output.body),
    h('h4', {}, 'Headers it adds'),
    headers.length === 0
      ? h('p', { class: 'muted' }, 'None.')
      : h(
          'table',
          { class: 'kv-table transform-headers' },
          h(
            'thead',
            {},
            h('tr', {}, h('th', { attrs: { scope: 'col' } }, 'Name'), h('th', { attrs: { scope: 'col' } }, 'Value')),
          ),
          h(
            'tbody',
            {},
            ...headers.map(([name, value]) => h('tr', {}, h('th', { attrs: { scope: 'row' } }, name), h('td', {}, value))),
          ),
        ),
  ];
}

/** The body as docs/transforms.md says it is sent: a string as text, anything else as JSON, none as the raw bytes. */
function bodyParts(body: unknown): HTMLElement[] {
  if (body === undefined) return [h('p', { class: 'muted transform-raw' }, 'No body: the raw bytes are sent as received.')];
  if (typeof body === 'string') {
    return [
      h('p', { class: 'muted' }, 'Text, sent with the original Content-Type:'),
      h('pre', { class: 'code transform-body', attrs: { 'data-kind': 'text' } }, body),
    ];
  }
  return [
    h('p', { class: 'muted' }, 'JSON, sent as application/json:'),
    h('pre', { class: 'code transform-body', attrs: { 'data-kind': 'json' } }, JSON.stringify(body, null, 2)),
  ];
}
