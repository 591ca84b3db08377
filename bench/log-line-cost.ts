import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sonicBoom from 'sonic-boom';
import { createLogger, LogDestination } from '../src/platform/observe/logger.js';
import { createWebhookLog, type WebhookLogFields } from '../src/receive/webhook-log.js';

/**
 * `node dist/bench/log-line-cost.js [ROUNDS]`: the CPU time of the webhook
 * route's log line, as the server writes it after a commit: 25 lines per
 * turn of the event loop through LogDestination to a file (sonic-boom), by
 * pino (`logger.info(fields, 'webhook')`) and by createWebhookLog, taking
 * turns round by round in one process so that both see the same machine.
 * Prints each round's µs of CPU (user + system, the writer's thread
 * included) per line, then the medians.
 */

const LINES_PER_TURN = 25;
const TURNS = 4000;
const rounds = Number(process.argv[2] ?? '7');

const dir = mkdtempSync(join(tmpdir(), 'reception-log-cost-'));
const destination = new LogDestination(new sonicBoom.SonicBoom({ dest: join(dir, 'log'), sync: false }));
const logger = createLogger('info', destination);
const byHand = createWebhookLog(logger);
const ways: Record<string, (fields: WebhookLogFields) => void> = {
  pino: (fields) => logger.info(fields, 'webhook'),
  'by hand': byHand,
};

let n = 0;
function fields(): WebhookLogFields {
  n++;
  return {
    req: { method: 'POST', path: '/api/webhook/stripe', remoteAddress: '127.0.0.1' },
    status: 200,
    ms: Math.round(1e3 + n) / 1e3,
    source: 'stripe',
    outcome: 'stored',
    id: `dlv_01JEXAMPLE${String(n).padStart(16, '0')}`,
    size: 949,
    verification: undefined,
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function measure(log: (fields: WebhookLogFields) => void): Promise<number> {
  const before = process.cpuUsage();
  for (let t = 0; t < TURNS; t++) {
    for (let i = 0; i < LINES_PER_TURN; i++) log(fields());
    await turn();
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (TURNS * LINES_PER_TURN);
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

async function main(): Promise<void> {
  const results: Record<string, number[]> = { pino: [], 'by hand': [] };
  // A warm-up round of each, not counted.
  for (const log of Object.values(ways)) await measure(log);
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    for (const [name, log] of Object.entries(ways)) {
      const us = await measure(log);
      results[name]?.push(us);
      line.push(`${name} ${us.toFixed(2)}`);
    }
    process.stdout.write(`round ${round}: ${line.join(', ')} µs CPU per line\n`);
  }
  const summary = Object.entries(results).map(([name, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${name} ${median(values).toFixed(2)} (${(sorted[0] ?? 0).toFixed(2)} to ${(sorted.at(-1) ?? 0).toFixed(2)})`;
  });
  process.stdout.write(`median over ${rounds} rounds: ${summary.join(', ')} µs CPU per line\n`);
  await destination.end();
  rmSync(dir, { recursive: true, force: true });
}

void main();
