import type { DrainResult, ForwardResult, IngestOnly, SustainedResult } from './forward-cases.js';
import { latencyLines, type LatencyResult } from './forward-latency.js';

/** The forwarding cases' part of the report, in markdown (bench/forward-cases.ts). */

const dash = '–';
const whole = (value: number | undefined): string => (value === undefined ? dash : Math.round(value).toLocaleString('en-US'));
const fixed = (value: number | undefined, digits: number): string => (value === undefined ? dash : value.toFixed(digits));
const ratio = (value: number | undefined, base: IngestOnly | undefined): string =>
  value === undefined || base === undefined ? dash : `${(value / base.requestsPerSecond).toFixed(2)}×`;

function sustainedRow(r: SustainedResult): string {
  if (r.load === undefined) return `| ${r.name} | failed: ${r.error ?? 'unknown'} |${' – |'.repeat(11)}`;
  const backlog = r.samples
    .slice(0, 3)
    .map((s) => whole(s.pending))
    .join(' / ');
  const ingestCpu = r.ingestOnly?.cpuUsPerDelivery;
  return `| ${[
    r.name,
    whole(r.load.requestsPerSecond),
    fixed(r.load.p99Ms, 2),
    whole(r.forwardsPerSecond),
    ratio(r.forwardsPerSecond, r.ingestOnly),
    ratio(r.load.requestsPerSecond, r.ingestOnly),
    backlog,
    r.backlogPerSecond === undefined ? dash : `${r.backlogPerSecond >= 0 ? '+' : ''}${whole(r.backlogPerSecond)}`,
    r.tailSeconds === undefined ? dash : `${fixed(r.tailSeconds, 1)} (${whole(r.tailForwardsPerSecond)}/s)`,
    r.serverCpuPercent === undefined ? dash : `${Math.round(r.serverCpuPercent)}%`,
    `${fixed(r.cpuUsPerForward, 0)}${ingestCpu === undefined ? '' : ` (ingest only ${ingestCpu.toFixed(0)})`}`,
    r.destinationCpuPercent === undefined ? dash : `${Math.round(r.destinationCpuPercent)}%`,
    r.check,
  ].join(' | ')} |`;
}

/** The transform case beside the same forwarding without one: both rates, their ratio, and the run's own cost. */
function transformLines(sustained: readonly SustainedResult[]): string[] {
  const lines: string[] = [];
  const plain = sustained.find((r) => r.name === 'forward sustained');
  for (const r of sustained) {
    const cost = r.transformRun;
    if (cost === undefined) continue;
    const rate =
      plain?.forwardsPerSecond === undefined || r.forwardsPerSecond === undefined
        ? ''
        : `${whole(r.forwardsPerSecond)} forwards/s with the transform, ${whole(plain.forwardsPerSecond)} without ` +
          `(${(r.forwardsPerSecond / plain.forwardsPerSecond).toFixed(2)}×); `;
    lines.push(
      '',
      `- ${r.name}: ${rate}the transform ran ${whole(cost.runs)} times, p50 ${whole(cost.p50Us)} µs, p99 ${whole(cost.p99Us)} µs ` +
        `in its sandbox (reception_transform_run_duration_seconds, interpolated within its buckets: p50 under ${whole(cost.p50BucketUs)} µs, ` +
        `p99 under ${whole(cost.p99BucketUs)} µs)`,
    );
  }
  return lines;
}

function drainLines(r: DrainResult): string[] {
  const lines: string[] = [];
  const fill =
    r.fill === undefined
      ? ''
      : `; backlog: ${whole(r.fill.deliveries)} deliveries stored in ${fixed(r.fill.seconds, 1)} s, each with 3 forwards`;
  lines.push(`**${r.name}**${fill}${r.error === undefined ? '' : `; **failed: ${r.error}**`}`, '');
  lines.push(
    '| drained by | forwards | seconds | forwards/s | vs ingest only | CPU µs per forward | destination CPU µs per forward | notes |',
  );
  lines.push('|---|--:|--:|--:|--:|--:|--:|---|');
  for (const row of r.rows) {
    lines.push(
      `| ${[
        row.phase,
        whole(row.forwards),
        fixed(row.seconds, 1),
        whole(row.forwardsPerSecond),
        ratio(row.forwardsPerSecond, r.ingestOnly),
        fixed(row.cpuUsPerForward, 0),
        fixed(row.destinationCpuUsPerForward, 0),
        row.notes,
      ].join(' | ')} |`,
    );
  }
  const pull = r.pull;
  if (pull !== undefined && pull.claimCpuSeconds !== undefined && pull.ackCpuSeconds !== undefined && pull.forwards > 0) {
    lines.push(
      '',
      `- pull, split by phase: claims ${fixed(pull.claimSeconds, 1)} s wall and ${fixed(pull.claimCpuSeconds, 1)} s of server CPU ` +
        `(${fixed((pull.claimCpuSeconds * 1e6) / pull.forwards, 0)} µs per forward claimed); acks ${fixed(pull.ackSeconds, 1)} s wall and ` +
        `${fixed(pull.ackCpuSeconds, 1)} s of server CPU (${fixed((pull.ackCpuSeconds * 1e6) / pull.forwards, 0)} µs per ack, ` +
        `${whole(pull.forwards / pull.ackSeconds)} acks/s while acking)`,
    );
  }
  lines.push('', `- check: ${r.check}`);
  return lines;
}

export function forwardMarkdown(results: readonly ForwardResult[], round?: number): string {
  if (results.length === 0) return '';
  const sustained = results.filter((r): r is SustainedResult => r.kind === 'sustained');
  const drains = results.filter((r): r is DrainResult => r.kind === 'drain');
  const base = results.find((r) => r.ingestOnly !== undefined)?.ingestOnly;
  const lines = [
    `### Forwarding${round === undefined ? '' : ` (round ${round})`}`,
    '',
    base === undefined
      ? '- no ingest-only case ran in this round: no ratios'
      : `- ingest only (${base.name}, same round): ${whole(base.requestsPerSecond)} req/s, ${fixed(base.cpuUsPerDelivery, 0)} µs of server CPU per delivery; ratios below are to its req/s`,
  ];
  if (sustained.length > 0) {
    lines.push(
      "- sustained: backlog = unsettled forwards (pending + delivering) at the start, middle and end of the window; forwards/s = growth of the store's " +
        'succeeded count over the window; tail = time to drain the backlog left when the load stopped; CPU µs per forward = server CPU in the window per forward ' +
        'that succeeded in it (each also received and stored)',
      '',
      '| case | ingest req/s | p99 ms | forwards/s | forwards/s vs ingest only | ingest vs ingest only | backlog start / middle / end | backlog per s | tail s (rate) | server CPU | CPU µs per forward | destination CPU | check |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
      ...sustained.map(sustainedRow),
    );
  }
  lines.push(...transformLines(sustained));
  for (const drain of drains) lines.push('', ...drainLines(drain));
  for (const latency of results.filter((r): r is LatencyResult => r.kind === 'latency')) lines.push('', ...latencyLines(latency));
  return `${lines.join('\n')}\n`;
}
