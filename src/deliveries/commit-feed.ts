/**
 * Tells live readers that the inbox may have grown. It carries no data: the
 * store is the truth and readers read from it after their own position, so
 * a missed or doubled wake-up can never cause a gap or a repeat.
 *
 * In one process the write queue wakes readers after each commit
 * (`LocalCommitFeed`); across instances a backend such as PostgreSQL
 * LISTEN/NOTIFY implements the same interface.
 */
export interface CommitFeed {
  /** Calls `listener` after new deliveries were committed; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Subscriptions currently held (a leak shows here). */
  readonly subscriberCount: number;
}

/** A feed that this process can also wake itself, after its own commits. */
export interface PublishingFeed extends CommitFeed {
  publish(): void;
}

export class LocalCommitFeed implements PublishingFeed {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    // Wrap it so that subscribing the same function twice still needs two unsubscribes,
    // and unsubscribing always removes exactly what this call added.
    const entry = (): void => listener();
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** Wakes every subscriber; called after each successful commit. */
  publish(): void {
    for (const listener of this.listeners) listener();
  }
}
