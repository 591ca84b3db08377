import type { TSchema } from 'typebox';
import { escapeJsonForTerminal } from '../platform/text/terminal-safe.js';
import { nearestWithin } from '../platform/text/edit-distance.js';
import { AlertsConfigSchema, MAX_NOTIFY, NotifyRouteSchema, type AlertsConfig } from '../alerts/alerts-config-schema.js';

type ErrorsOf = (schema: TSchema, data: unknown, prefix: string) => string[];

/** What the names of a config file's destinations and transforms are, for `alerts.notify` to name. */
export interface KnownNames {
  destinations: ReadonlySet<string>;
  pullDestinations: ReadonlySet<string>;
  transforms: ReadonlySet<string>;
}

/**
 * Checks `alerts` (CONTRACT 11): its shape, then that each `notify` entry
 * names a destination of the file that Reception sends to (a pull
 * destination is only read by consumers) and, when it has one, a transform
 * of the file. Pushes the problems found.
 */
export function alertsProblems(alerts: unknown, names: KnownNames, problems: string[], errorsOf: ErrorsOf): void {
  if (alerts === undefined) return;
  const shape = shapeProblems(alerts, errorsOf);
  if (shape.length > 0) {
    problems.push(...shape);
    return;
  }
  ((alerts as AlertsConfig).notify ?? []).forEach((entry, index) => {
    const here = `alerts.notify[${index}]`;
    const to = typeof entry === 'string' ? entry : entry.to;
    const at = typeof entry === 'string' ? here : `${here}.to`;
    const shown = escapeJsonForTerminal(JSON.stringify(to));
    if (!names.destinations.has(to)) {
      const near = nearestWithin(to, [...names.destinations], 2);
      problems.push(
        `${at}: there is no destination ${shown}${near === undefined ? '' : ` (did you mean "${near}"?)`}; ` +
          `destinations are named under "destinations"${names.destinations.size === 0 ? ', and the file has none' : `: ${[...names.destinations].join(', ')}`}`,
      );
    } else if (names.pullDestinations.has(to)) {
      problems.push(
        `${at}: ${shown} is a pull destination; notifications go to a destination Reception sends to (url, nats, amqp or redis)`,
      );
    }
    if (typeof entry === 'string' || entry.transform === undefined) return;
    if (!names.transforms.has(entry.transform)) {
      const near = nearestWithin(entry.transform, [...names.transforms], 2);
      problems.push(
        `${here}.transform: there is no transform ${escapeJsonForTerminal(JSON.stringify(entry.transform))}${near === undefined ? '' : ` (did you mean "${near}"?)`}; ` +
          `transforms are named under "transforms"${names.transforms.size === 0 ? ', and the file has none' : `: ${[...names.transforms].join(', ')}`}`,
      );
    }
  });
}

/**
 * The shape of `alerts`, each notify entry checked on its own, so that a bad
 * one is told as what it is (a destination's name, or `{ to, transform }`)
 * rather than as a value that matches neither.
 */
function shapeProblems(alerts: unknown, errorsOf: ErrorsOf): string[] {
  if (typeof alerts !== 'object' || alerts === null || Array.isArray(alerts))
    return errorsOf(AlertsConfigSchema, alerts, 'alerts');
  const { notify, ...rest } = alerts as { notify?: unknown };
  if (!Array.isArray(notify)) return errorsOf(AlertsConfigSchema, alerts, 'alerts');
  const problems = errorsOf(AlertsConfigSchema, rest, 'alerts');
  if (notify.length > MAX_NOTIFY) problems.push(`alerts.notify: at most ${MAX_NOTIFY} destinations, got ${notify.length}`);
  notify.forEach((entry: unknown, index) => {
    const here = `alerts.notify[${index}]`;
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry))
      problems.push(...errorsOf(NotifyRouteSchema, entry, here));
    else if (typeof entry !== 'string' || entry === '')
      problems.push(`${here}: expected a destination's name, or { to: <destination>, transform: <transform> }`);
  });
  return problems;
}
