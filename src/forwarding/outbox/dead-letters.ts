/** A forward that has just gone to `failed` (a dead letter, CONTRACT 6): its destination and its last error. */
export interface DeadLetter {
  destination: string;
  error: string | null;
}

export type DeadLetterListener = (letters: readonly DeadLetter[]) => void;

/**
 * Who hears of the forwards an outbox fails (the issues feature counts them,
 * docs/alerts.md "What opens an issue"). A store gathers the dead letters of
 * a transaction and tells them once it has committed: a rolled-back one
 * failed nothing. A listener that throws is not the store's problem.
 */
export class DeadLetterListeners {
  private readonly listeners = new Set<DeadLetterListener>();

  add(listener: DeadLetterListener): () => void {
    // Wrapped, so that the same function added twice is two listeners, each removed by its own call.
    const entry: DeadLetterListener = (letters) => listener(letters);
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  tell(letters: readonly DeadLetter[]): void {
    if (letters.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(letters);
      } catch {
        // Listeners take care of their own failures; forwarding goes on.
      }
    }
  }
}
