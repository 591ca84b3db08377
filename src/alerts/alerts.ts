import type { AlertsConfig } from './alerts-config-schema.js';

/** A destination that is told of issues, and the transform that shapes the event for it (null: the JSON event as it is). */
export interface NotifyTarget {
  destination: string;
  transform: string | null;
}

/** The config file's `alerts` with the defaults filled in (CONTRACT 11). */
export interface Alerts {
  backlogSeconds: number;
  notify: readonly NotifyTarget[];
}

export const BACKLOG_SECONDS = 300;

export function resolveAlerts(config: AlertsConfig | undefined): Alerts {
  const notify: NotifyTarget[] = [];
  for (const entry of config?.notify ?? []) {
    const target =
      typeof entry === 'string'
        ? { destination: entry, transform: null }
        : { destination: entry.to, transform: entry.transform ?? null };
    // A destination named twice is told once (the first entry's transform).
    if (!notify.some((t) => t.destination === target.destination)) notify.push(target);
  }
  return { backlogSeconds: config?.backlogSeconds ?? BACKLOG_SECONDS, notify };
}

/** The names of the destinations that are told of issues: never the subject of one (CONTRACT 11). */
export function notifyNames(alerts: Alerts): Set<string> {
  return new Set(alerts.notify.map((target) => target.destination));
}
