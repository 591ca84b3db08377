import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/platform/observe/metrics.js';
import { RetentionPruner } from '../../src/inbox/retention-pruner.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { newDeliveries } from '../helpers/delivery-factory.js';
import { deliver, readDelivery } from '../helpers/exchange.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Issue 2, part 5: retention is pruned in small batches that never stall receiving. */
describe('retention while webhooks arrive', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp();
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers a webhook sent at the start of a long pruning round before the round ends, and keeps it', async () => {
    const old = newDeliveries(20_000, { source: 'expired', receivedAt: Date.now() - 2 * DAY_MS });
    await server.store.append(old);
    const pruner = new RetentionPruner({
      store: server.store,
      retentionMs: DAY_MS,
      logger: capturingLogger().logger,
      metrics: new Metrics(),
      batchSize: 200,
    });
    const order: string[] = [];

    const round = pruner.pruneOnce().then((deleted) => {
      order.push('pruned');
      return deleted;
    });
    const receipt = deliver(server, 'during-prune', '{"fresh":true}').then((answer) => {
      order.push('answered');
      return answer;
    });
    const [deleted, { id }] = await Promise.all([round, receipt]);

    // 100 transactions of 200: the webhook is read, committed and answered between two of them.
    expect(deleted).toBe(20_000);
    expect(order).toEqual(['answered', 'pruned']);
    expect((await readDelivery(server, id)).body).toEqual({ fresh: true });
    expect((await server.store.sources()).map((s) => s.source)).toEqual(['during-prune']);
  });
});
