import type { DestinationConfig } from '../config/destination-config-schema.js';
import type { RetryBudget } from '../store/outbox.js';

/** A destination's settings with the contract's defaults filled in (CONTRACT 6). */
export interface Destination {
  name: string;
  kind: 'http' | 'pull';
  url?: URL;
  timeoutMs: number;
  concurrency: number;
  rateLimit?: { requests: number; perSeconds: number };
  retry: { attempts: number; initialMs: number; maxMs: number; maxAgeSeconds: number };
  ordered: boolean;
  headers: ReadonlyArray<[string, string]>;
  signSecret?: string;
  allowPrivateNetwork: boolean;
}

export const RETRY_DEFAULTS = { attempts: 12, initialMs: 1000, maxMs: 3_600_000, maxAgeSeconds: 259_200 } as const;

export function resolveDestination(name: string, config: DestinationConfig): Destination {
  const destination: Destination = {
    name,
    kind: config.pull === true ? 'pull' : 'http',
    timeoutMs: config.timeoutMs ?? 10_000,
    concurrency: config.concurrency ?? 10,
    retry: { ...RETRY_DEFAULTS, ...config.retry },
    ordered: config.ordered ?? false,
    headers: Object.entries(config.headers ?? {}),
    allowPrivateNetwork: config.allowPrivateNetwork ?? false,
  };
  if (config.url !== undefined) destination.url = new URL(config.url);
  if (config.rateLimit !== undefined) destination.rateLimit = config.rateLimit;
  const secret = config.sign?.secrets[0];
  if (secret !== undefined) destination.signSecret = secret;
  return destination;
}

export function resolveDestinations(config: Record<string, DestinationConfig> | undefined): Map<string, Destination> {
  return new Map(Object.entries(config ?? {}).map(([name, settings]) => [name, resolveDestination(name, settings)]));
}

export function budgetOf(destination: Destination): RetryBudget {
  return { attempts: destination.retry.attempts, maxAgeMs: destination.retry.maxAgeSeconds * 1000 };
}

/** Two resolved destinations that would send the same way (a reload keeps the running one). */
export function sameDestination(a: Destination, b: Destination): boolean {
  return JSON.stringify({ ...a, url: a.url?.href }) === JSON.stringify({ ...b, url: b.url?.href });
}
