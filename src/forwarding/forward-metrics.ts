import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Outbox } from './outbox/outbox.js';

interface Snapshot {
  name: string;
  pending: number;
  oldest: number | null;
  circuit: number;
}

const CIRCUIT_GAUGE = { closed: 0, half_open: 1, open: 2 } as const;

/** The forwarding metrics of CONTRACT 6, in the instance's registry. */
export class ForwardMetrics {
  readonly attempts: Counter<'destination' | 'outcome'>;
  readonly duration: Histogram<'destination'>;
  private outbox: Outbox | undefined;
  private readonly openings: Counter<'destination'>;
  private readonly rates: Gauge<'destination'>;
  private readonly children = new Map<string, { inc: () => void }>();
  private readonly durations = new Map<string, { observe: (seconds: number) => void }>();

  constructor(registry: Registry) {
    this.attempts = new Counter({
      name: 'reception_forward_attempts_total',
      help: 'Forward attempts, by destination and outcome (succeeded, retry, failed, cancelled: dropped by its transform).',
      labelNames: ['destination', 'outcome'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'reception_forward_attempt_duration_seconds',
      help: 'Time one forward attempt took, by destination.',
      labelNames: ['destination'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    this.openings = new Counter({
      name: 'reception_destination_circuit_openings_total',
      help: "Times a destination's circuit opened (or opened again after a failed probe), as this instance's outcomes opened it.",
      labelNames: ['destination'] as const,
      registers: [registry],
    });
    this.rates = new Gauge({
      name: 'reception_destination_send_rate',
      help: 'The send rate (requests a second) a 429 or 503 slowed a destination to, in this instance; absent when not slowed.',
      labelNames: ['destination'] as const,
      registers: [registry],
    });
    // Read from the store when scraped: the outbox is shared by every instance.
    const read = async (): Promise<Snapshot[]> => {
      if (this.outbox === undefined) return [];
      try {
        return (await this.outbox.destinations()).map((d) => ({
          name: d.name,
          pending: d.pending,
          oldest: d.oldestPendingAt,
          circuit: CIRCUIT_GAUGE[d.circuit.state],
        }));
      } catch {
        return [];
      }
    };
    let snapshot: Promise<Snapshot[]> | undefined;
    const once = (): Promise<Snapshot[]> => {
      snapshot ??= read().finally(() => {
        setImmediate(() => {
          snapshot = undefined;
        });
      });
      return snapshot;
    };
    new Gauge({
      name: 'reception_forward_pending',
      help: 'Forwards not yet settled (pending and delivering), by destination.',
      labelNames: ['destination'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const d of await once()) this.set({ destination: d.name }, d.pending);
      },
    });
    new Gauge({
      name: 'reception_forward_oldest_pending_seconds',
      help: 'Age of the oldest forward not yet settled, by destination (0 when none waits).',
      labelNames: ['destination'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const now = Date.now();
        for (const d of await once())
          this.set({ destination: d.name }, d.oldest === null ? 0 : Math.max(0, (now - d.oldest) / 1000));
      },
    });
    new Gauge({
      name: 'reception_destination_circuit_state',
      help: "A destination's circuit, as stored (shared by every instance): 0 closed, 1 half open, 2 open.",
      labelNames: ['destination'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const d of await once()) this.set({ destination: d.name }, d.circuit);
      },
    });
  }

  /** A destination's circuit opened (this instance's outcomes opened it). */
  circuitOpened(destination: string): void {
    this.openings.labels(destination).inc();
  }

  /** The rate a 429 or 503 slowed the destination to; undefined: no longer slowed. */
  sendRate(destination: string, requestsPerSecond: number | undefined): void {
    if (requestsPerSecond === undefined) this.rates.remove(destination);
    else this.rates.labels(destination).set(requestsPerSecond);
  }

  /** The outbox the gauges read. */
  watch(outbox: Outbox): void {
    this.outbox = outbox;
  }

  recordAttempt(destination: string, outcome: 'succeeded' | 'retry' | 'failed' | 'cancelled', seconds: number): void {
    const key = `${destination}\u0000${outcome}`;
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.attempts.labels(destination, outcome);
      this.children.set(key, child);
    }
    child.inc();
    let timer = this.durations.get(destination);
    if (timer === undefined) {
      timer = this.duration.labels(destination);
      this.durations.set(destination, timer);
    }
    timer.observe(seconds);
  }
}
