import type { Logger } from '../../platform/observe/logger.js';
import { NO_ISSUE_SIGNALS, type IssueSignals } from '../../issues/issue-signals.js';
import type { CircuitSettled, Outbox } from '../outbox/outbox.js';
import type { ForwardMetrics } from '../forward-metrics.js';
import { blocks, closedCircuit, probeDue, type Circuit } from './circuit.js';

/**
 * One dispatcher's view of its destination's stored circuit (docs/circuits.md):
 * read again at most every `refreshMs` (another instance's change is seen
 * within it), replaced by what each settle answers, and told onwards (log,
 * metrics, issues) when this instance's outcomes changed it.
 */
export class CircuitWatch {
  private circuit: Circuit = closedCircuit();
  private readAt = -Infinity;

  constructor(
    private readonly destination: string,
    deps: { outbox: Outbox; logger: Logger; metrics: ForwardMetrics; issues?: IssueSignals },
    private readonly refreshMs: number,
  ) {
    // Told when the circuit opens (destination_down, each failed probe too) and closes (CONTRACT 11).
    this.deps = { ...deps, issues: deps.issues ?? NO_ISSUE_SIGNALS };
  }

  private readonly deps: { outbox: Outbox; logger: Logger; metrics: ForwardMetrics; issues: IssueSignals };

  /** True while no attempt may start (open, or half open with the probe elsewhere or under way). */
  blocks(): boolean {
    return blocks(this.circuit);
  }

  probeDue(now: number): boolean {
    return probeDue(this.circuit, now);
  }

  /** Reads the stored circuit when the last reading is older than the refresh; a store that fails keeps the last one. */
  async refresh(now: number, force = false): Promise<void> {
    if (!force && now - this.readAt < this.refreshMs) return;
    this.readAt = now;
    try {
      this.circuit = await this.deps.outbox.circuit(this.destination);
    } catch {
      // Kept as it was; the next refresh tries again.
    }
  }

  /** Forgets the stored circuit (the destination's settings changed); one that was open is told as closed. */
  async reset(): Promise<void> {
    const { destination } = this;
    try {
      if (await this.deps.outbox.resetCircuit(destination)) {
        this.deps.logger.info({ destination }, "circuit closed: the destination's settings changed");
        this.deps.issues.cleared('destination_down', destination);
      }
    } catch (error) {
      this.deps.logger.warn(
        { destination, problem: error instanceof Error ? error.message : String(error) },
        'the circuit could not be reset; it stays as it was',
      );
    }
  }

  /** This instance took the probe: half open until `until`. */
  probing(now: number, until: number): void {
    this.circuit = { ...this.circuit, state: 'half_open', since: now, until };
    this.readAt = now;
  }

  /** What a settle answered: the circuit now, and what this instance's outcomes changed. */
  settled(result: CircuitSettled): void {
    this.circuit = result.circuit;
    this.readAt = Date.now();
    const { destination } = this;
    const { logger, metrics, issues } = this.deps;
    for (const change of result.changes) {
      if (change.kind === 'closed') {
        logger.info({ destination }, 'circuit closed: the destination answers again');
        issues.cleared('destination_down', destination);
        continue;
      }
      metrics.circuitOpened(destination);
      const until = new Date(result.circuit.until ?? change.at).toISOString();
      logger.warn(
        { destination, consecutiveFailures: result.circuit.consecutiveFailures, until, error: change.error },
        change.kind === 'opened'
          ? 'circuit opened: no attempts to this destination until its cooldown ends'
          : 'circuit opened again: the probe failed; the cooldown doubles',
      );
      issues.occurred('destination_down', destination, change.error);
    }
  }

  /** How long to sleep while the circuit blocks: until its cooldown (or a probe's window) ends, at most the refresh. */
  waitMs(now: number): number {
    const left = (this.circuit.until ?? Infinity) - now;
    return left <= 0 ? this.refreshMs : Math.max(10, Math.min(this.refreshMs, left));
  }
}
