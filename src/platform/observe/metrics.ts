import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Past this many distinct sources that the config file does not name,
 * further ones share the label `_other`. The configured ones are not
 * counted here: each always has its own label.
 */
const MAX_SOURCE_LABELS = 500;

/**
 * prom-client's default metrics count Node's active handles, requests and
 * resources in gauges named `nodejs_active_…_total`; `_total` is for
 * counters, and `promtool check metrics` refuses a gauge named so. The same
 * numbers are kept, as `nodejs_active_handles_all`,
 * `nodejs_active_requests_all` and `nodejs_active_resources_all` (docs/running.md).
 */
function renameTotalGauges(registry: Registry): void {
  const what = {
    handles: 'Active libuv handles',
    requests: 'Active libuv requests',
    resources: 'Active resources keeping the event loop alive',
  };
  for (const [kind, text] of Object.entries(what)) {
    const old = registry.getSingleMetric(`nodejs_active_${kind}_total`);
    if (old === undefined) continue; // a Node without the function it reads
    registry.removeSingleMetric(`nodejs_active_${kind}_total`);
    new Gauge({
      name: `nodejs_active_${kind}_all`,
      help: `${text}, of every type (nodejs_active_${kind} summed over type).`,
      registers: [registry],
      async collect() {
        const { values } = await old.get();
        this.set(values[0]?.value ?? 0);
      },
    });
  }
}

/** The Prometheus metrics of one Reception instance, in a registry of its own. */
export class Metrics {
  readonly registry = new Registry();
  readonly deliveries = new Counter({
    name: 'reception_deliveries_total',
    help: 'Requests to /api/webhook/{source}, by source and outcome (stored, duplicate, or the error code).',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'reception_http_request_duration_seconds',
    help: 'Time from the request to the end of the answer, by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly commitBatchSize = new Histogram({
    name: 'reception_commit_batch_size',
    help: 'Deliveries committed together in one transaction.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry],
  });
  readonly commitDuration = new Histogram({
    name: 'reception_commit_duration_seconds',
    help: 'Time one group commit took, by result.',
    labelNames: ['result'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'reception_write_queue_depth',
    help: 'Deliveries not yet answered: waiting for a commit, or inside the one running now.',
    registers: [this.registry],
  });
  readonly incomingBodyBytes = new Gauge({
    name: 'reception_incoming_body_bytes',
    help: 'Bytes of webhook bodies held while they arrive (bounded by RECEPTION_INCOMING_MAX_BYTES).',
    registers: [this.registry],
  });
  readonly verificationFailures = new Counter({
    name: 'reception_verification_failures_total',
    help: 'Deliveries whose signature check failed, by source and reason.',
    labelNames: ['source', 'reason'] as const,
    registers: [this.registry],
  });
  readonly configReloads = new Counter({
    name: 'reception_config_reloads_total',
    help: 'Config file reloads (SIGHUP), by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly pruned = new Counter({
    name: 'reception_retention_pruned_total',
    help: 'Deliveries deleted by retention.',
    registers: [this.registry],
  });
  readonly refusalsKept = new Counter({
    name: 'reception_refusals_kept_total',
    help: 'Refused webhook requests written to the refusals (GET /api/refusals), by problem code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly refusalsDropped = new Counter({
    name: 'reception_refusals_dropped_total',
    help: 'Refused webhook requests not kept, by reason: buffer_full (a flood, or the store down), refused (by the store), shutdown.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly refusalsPruned = new Counter({
    name: 'reception_refusals_pruned_total',
    help: 'Refusals deleted for their age (RECEPTION_REFUSALS_RETENTION); those past the count bounds are not counted here.',
    registers: [this.registry],
  });
  /** Unconfigured sources that got a label of their own, first come first served. */
  private readonly sourceLabels = new Set<string>();
  /** The config file's sources (replaced on reload): each always labelled as itself. */
  private configuredSources: ReadonlySet<string> = new Set();
  /** Label children resolved once: prom-client hashes the labels on every call otherwise. */
  private readonly deliveryChildren = new Map<string, { inc: () => void }>();
  private readonly durationChildren = new Map<string, { observe: (value: number) => void }>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    renameTotalGauges(this.registry);
  }

  /**
   * The sources of the config file in force (at start and after each
   * reload): they keep their own label however many strangers came first.
   * A source dropped by a reload keeps the series it has.
   */
  setConfiguredSources(sources: Iterable<string>): void {
    this.configuredSources = new Set(sources);
  }

  /**
   * A bounded label for a source name, so that hostile senders cannot grow
   * the registry: a configured source is itself; others share a pool of
   * MAX_SOURCE_LABELS, then `_other`.
   */
  sourceLabel(source: string): string {
    if (this.configuredSources.has(source) || this.sourceLabels.has(source)) return source;
    if (this.sourceLabels.size >= MAX_SOURCE_LABELS) return '_other';
    this.sourceLabels.add(source);
    return source;
  }

  /** Counts one webhook request by (bounded) source label and outcome. */
  countDelivery(source: string, outcome: string): void {
    const label = this.sourceLabel(source);
    const key = `${label}\u0000${outcome}`;
    let child = this.deliveryChildren.get(key);
    if (child === undefined) {
      child = this.deliveries.labels(label, outcome);
      this.deliveryChildren.set(key, child);
    }
    child.inc();
  }

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let child = this.durationChildren.get(key);
    if (child === undefined) {
      child = this.requestDuration.labels(route, method, String(status));
      // Methods are sender-chosen: past a bound, stop caching rather than grow.
      if (this.durationChildren.size < 1000) this.durationChildren.set(key, child);
    }
    child.observe(seconds);
  }

  recordCommit(batchSize: number, seconds: number, ok: boolean): void {
    this.commitBatchSize.observe(batchSize);
    this.commitDuration.observe({ result: ok ? 'ok' : 'error' }, seconds);
  }
}
