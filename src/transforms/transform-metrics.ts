import { Counter, Histogram, type Registry } from 'prom-client';

/** The transform metrics of CONTRACT 10, in the instance's registry. */
export class TransformMetrics {
  readonly runs: Counter<'transform' | 'outcome'>;
  readonly duration: Histogram<'transform'>;

  constructor(registry: Registry) {
    this.runs = new Counter({
      name: 'reception_transform_runs_total',
      help: 'Transform runs, by transform and outcome (output, dropped, failed).',
      labelNames: ['transform', 'outcome'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'reception_transform_run_duration_seconds',
      help: 'Time one transform run took in its sandbox, by transform.',
      labelNames: ['transform'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    });
  }
}
