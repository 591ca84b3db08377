import { createHash } from 'node:crypto';
import type { TransformLimits } from './sandbox.js';
import type { TransformOutput } from './transform-output.js';
import { TransformPool } from './transform-pool.js';
import type { TransformMetrics } from './transform-metrics.js';
import { transformEventJson } from './transform-event.js';
import type { StoredDelivery } from '../deliveries/delivery-store.js';

/** A transform of the config in force (CONTRACT 10): its code and limits, and its version. */
export interface TransformDefinition {
  name: string;
  /** The first 12 hex digits of the code's SHA-256 (CONTRACT 10). */
  version: string;
  code: string;
  limits: TransformLimits;
}

/** A route that uses a transform (`sources.<source>.forward[]` with `transform:`). */
export interface TransformUser {
  source: string;
  destination: string;
}

/** What running a transform gave (CONTRACT 10 "Try it"), with the version that ran. */
export type TransformResult = { transform: { name: string; version: string }; logs: string[]; durationMs: number } & (
  { output: TransformOutput | null } | { error: string }
);

/** A transform's version: the first 12 hex digits of the SHA-256 of its code. */
export function transformVersion(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex').slice(0, 12);
}

/**
 * The transforms in force, swapped whole by a reload (`apply`), and run on
 * the pool's threads. The forwarding attempt path calls
 * `runOnDelivery(name, delivery)`, as the try-it route does.
 */
export class Transforms {
  private byName = new Map<string, TransformDefinition>();
  private closing = false;
  private users = new Map<string, TransformUser[]>();

  constructor(
    private readonly pool: TransformPool = new TransformPool(),
    private readonly metrics?: TransformMetrics,
  ) {}

  /** The transforms of a config just loaded (or reloaded); runs already started finish on the version they began with. */
  apply(definitions: Iterable<TransformDefinition>, users: ReadonlyMap<string, TransformUser[]> = new Map()): void {
    this.byName = new Map([...definitions].map((definition) => [definition.name, definition]));
    this.users = new Map(users);
  }

  /** The routes that name the transform. */
  usersOf(name: string): TransformUser[] {
    return this.users.get(name) ?? [];
  }

  get(name: string): TransformDefinition | undefined {
    return this.byName.get(name);
  }

  list(): TransformDefinition[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Runs the named transform on the event (JSON text); undefined for a name the config does not have. Never rejects. */
  async run(name: string, eventJson: string): Promise<TransformResult | undefined> {
    const definition = this.byName.get(name);
    if (definition === undefined) return undefined;
    const result = await this.pool.run(definition, eventJson);
    const transform = { name, version: definition.version };
    const outcome = 'error' in result ? 'failed' : result.output === null ? 'dropped' : 'output';
    this.metrics?.runs.inc({ transform: name, outcome });
    this.metrics?.duration.observe({ transform: name }, result.durationMs / 1000);
    return { transform, ...result };
  }

  /**
   * Runs the named transform on a stored delivery, the event built as CONTRACT 10
   * "In" says: what the forwarding attempt path calls (and the try-it route).
   * Undefined for a name the config does not have; never rejects.
   */
  runOnDelivery(name: string, delivery: StoredDelivery): Promise<TransformResult | undefined> {
    if (!this.byName.has(name)) return Promise.resolve(undefined);
    return this.run(name, transformEventJson(delivery));
  }

  /** Closed (or closing): runs answer an error that says nothing about the transform. */
  get closed(): boolean {
    return this.closing;
  }

  close(): Promise<void> {
    this.closing = true;
    return this.pool.close();
  }
}
