import type { Logger } from '../platform/observe/logger.js';
import type { ForwardMetrics } from './forward-metrics.js';
import type { Outbox } from './outbox/outbox.js';
import type { CommitFeed } from '../deliveries/commit-feed.js';
import type { ConnectionStatus } from './publishers/broker-connection.js';
import { createPublisher } from './publishers/create-publisher.js';
import { budgetOf, isPushed, sameDestination, type Destination } from './destination.js';
import { PushDispatcher, POLL_MS } from './dispatcher.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { Publisher } from './publishers/publisher.js';
import type { Transforms } from '../transforms/transforms.js';
import type { IssueSignals } from '../issues/issue-signals.js';
import type { AppendOutcome, NewDelivery } from '../deliveries/delivery-store.js';
import { appendLeasing, type Append, type CommitLeasing } from './lease-at-commit.js';

export interface ForwarderDeps {
  outbox: Outbox;
  feed: CommitFeed;
  logger: Logger;
  metrics: ForwardMetrics;
  redactHeaders: ReadonlySet<string>;
  /** How long a push lease lasts unless renewed (DEFAULT_LEASE_MS when absent; RECEPTION_FORWARD_LEASE_MS). */
  leaseMs?: number;
  /** The transforms in force, swapped by a reload: each attempt runs its forward's (CONTRACT 10). */
  transforms?: Transforms;
  /** Told of what goes wrong while forwarding (CONTRACT 11); nowhere when absent. */
  issues?: IssueSignals;
}

/**
 * Owns forwarding for one instance: a dispatcher per push destination of the
 * config in force, woken by every commit (this instance's, or another's
 * through the commit feed), and a sweep that turns the expired leases of
 * pull destinations into failed attempts.
 */
export class Forwarder {
  private destinations = new Map<string, Destination>();
  private readonly dispatchers = new Map<string, PushDispatcher>();
  /** Each dispatcher's publisher (a broker's holds its connection). */
  private readonly publishers = new Map<string, Publisher>();
  /** Held while some destination is pushed to: the commit feed wakes its dispatcher. */
  private unsubscribe: (() => void) | undefined;
  private sweep: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Whether a config was put in force already: a later one resets the circuits of the destinations it adds or changes. */
  private applied = false;
  /** This instance's push leases, renewed while it lives (CONTRACT 6 "After a crash"). */
  readonly leases: LeaseKeeper;
  /** What a commit needs to lease forwards to this instance's dispatchers (lease-at-commit.ts). */
  private readonly leasing: CommitLeasing;

  constructor(private readonly deps: ForwarderDeps) {
    deps.metrics.watch(deps.outbox);
    this.leases = new LeaseKeeper(deps.outbox, deps.logger, deps.leaseMs);
    this.leasing = {
      dispatcher: (name) => (this.stopped ? undefined : this.dispatchers.get(name)),
      owner: this.leases.owner,
      leaseMs: this.leases.leaseMs,
    };
  }

  /** Puts a config's destinations in force: new ones start, removed ones stop, changed ones restart. */
  apply(destinations: ReadonlyMap<string, Destination>): void {
    if (this.stopped) return;
    this.destinations = new Map(destinations);
    for (const [name, dispatcher] of this.dispatchers) {
      const next = destinations.get(name);
      if (next === undefined || !isPushed(next) || !sameDestination(next, dispatcher.destination)) {
        this.dispatchers.delete(name);
        this.publishers.delete(name);
        void dispatcher.stop(dispatcher.destination.timeoutMs);
      }
    }
    for (const destination of destinations.values()) {
      if (!isPushed(destination) || this.dispatchers.has(destination.name)) continue;
      const { logger, redactHeaders } = this.deps;
      const publisher = createPublisher(destination, { logger, redactHeaders });
      const dispatcher = new PushDispatcher(destination, {
        outbox: this.deps.outbox,
        publisher,
        metrics: this.deps.metrics,
        logger: this.deps.logger,
        leases: this.leases,
        ...(this.deps.transforms === undefined ? {} : { transforms: this.deps.transforms }),
        ...(this.deps.issues === undefined ? {} : { issues: this.deps.issues }),
      });
      this.dispatchers.set(destination.name, dispatcher);
      this.publishers.set(destination.name, publisher);
      // A destination added or changed by a reload starts with its circuit closed (docs/circuits.md);
      // at start, each keeps the circuit it had, shared with the other instances.
      dispatcher.start(this.applied);
    }
    this.applied = true;
    if (this.dispatchers.size > 0) this.unsubscribe ??= this.deps.feed.subscribe(() => this.wakeAll());
    else {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
    this.sweep ??= setInterval(() => void this.sweepPull(), POLL_MS * 5).unref();
    if (this.dispatchers.size > 0) this.leases.start();
  }

  /** The destination of that name in the config in force. */
  get(name: string): Destination | undefined {
    return this.destinations.get(name);
  }

  list(): Destination[] {
    return [...this.destinations.values()];
  }

  /** A broker destination's connection; undefined for an HTTP or pull one. */
  connectionOf(name: string): ConnectionStatus | undefined {
    return this.publishers.get(name)?.connection?.();
  }

  /**
   * Commits a batch with `append`, leasing at the commit the forwards whose
   * dispatcher here has room, and handing them to it straight after (see
   * lease-at-commit.ts); the write queue commits through this.
   */
  append(batch: readonly NewDelivery[], append: Append): Promise<AppendOutcome[]> {
    if (this.stopped || this.dispatchers.size === 0) return append(batch);
    return appendLeasing(batch, append, this.leasing);
  }

  wake(name: string): void {
    this.dispatchers.get(name)?.wake();
  }

  wakeAll(): void {
    for (const dispatcher of this.dispatchers.values()) dispatcher.wake();
  }

  /** Stops every dispatcher: attempts in flight get `graceMs` to finish, then are aborted and recorded. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.sweep);
    // Renewed until every attempt in flight is recorded: the grace may outlast a lease.
    await Promise.all([...this.dispatchers.values()].map((dispatcher) => dispatcher.stop(graceMs)));
    await this.leases.stop();
    this.dispatchers.clear();
    this.publishers.clear();
  }

  private async sweepPull(): Promise<void> {
    for (const destination of this.destinations.values()) {
      if (destination.kind !== 'pull') continue;
      await this.deps.outbox
        .claim({
          destination: destination.name,
          max: 0,
          leaseMs: 0,
          now: Date.now(),
          ordered: destination.ordered,
          budget: budgetOf(destination),
        })
        .catch(() => undefined);
    }
  }
}
