import { describe, expect, it } from 'vitest';
import { freshStoreEachTest, type OpenStore } from '../../../test/helpers/store-fixtures.js';
import { newDeliveryId } from '../../deliveries/delivery-id.js';
import type { IssueKind } from '../issue-signals.js';
import type { Occurrences } from '../issue-store.js';

const T0 = Date.UTC(2026, 10, 28, 5, 0, 0);

function burst(kind: IssueKind, subject: string, count: number, at: number, lastError: string | null = null): Occurrences {
  return { kind, subject, count, firstAt: at, lastAt: at, lastError };
}

/**
 * What every backend's issues owe the tracker (docs/alerts.md): one open
 * issue per kind and subject, counted on; the write that opens or resolves
 * one says so, and no other does.
 */
export function describeIssueStore(name: string, open: OpenStore): void {
  describe(`IssueStore contract: ${name}`, () => {
    const store = freshStoreEachTest(open);

    it('opens an issue with the first occurrences, then counts on it: one open issue per kind and subject', async () => {
      const { issues } = store();
      const first = await issues.occur(burst('destination_down', 'app', 3, T0, 'HTTP 500'), newDeliveryId(T0));
      expect(first.opened).toBe(true);
      expect(first.issue).toMatchObject({
        kind: 'destination_down',
        subject: 'app',
        status: 'open',
        count: 3,
        firstAt: T0,
        lastAt: T0,
      });
      const again = await issues.occur(burst('destination_down', 'app', 2, T0 + 5000, null), newDeliveryId(T0 + 5000));
      expect(again.opened).toBe(false);
      expect(again.issue).toMatchObject({ id: first.issue.id, count: 5, firstAt: T0, lastAt: T0 + 5000, lastError: 'HTTP 500' });
      const other = await issues.occur(burst('dead_letters', 'app', 1, T0, 'gone'), newDeliveryId(T0));
      expect(other.opened).toBe(true);
      expect(await issues.countOpen()).toEqual({
        destination_down: 1,
        dead_letters: 1,
        backlog: 0,
        verification_failing: 0,
        transform_failing: 0,
      });
    });

    it('resolves the open issue once; the next occurrence opens a new one', async () => {
      const { issues } = store();
      const { issue } = await issues.occur(burst('backlog', 'app', 1, T0), newDeliveryId(T0));
      const resolved = await issues.resolve('backlog', 'app', T0 + 1000);
      expect(resolved).toMatchObject({ id: issue.id, status: 'resolved', resolvedAt: T0 + 1000 });
      expect(await issues.resolve('backlog', 'app', T0 + 2000)).toBeNull();
      expect(await issues.resolve('backlog', 'never-opened', T0 + 2000)).toBeNull();
      const reopened = await issues.occur(burst('backlog', 'app', 1, T0 + 3000), newDeliveryId(T0 + 3000));
      expect(reopened.opened).toBe(true);
      expect(reopened.issue.id).not.toBe(issue.id);
      expect(reopened.issue.count).toBe(1);
      expect((await issues.get(issue.id))?.status).toBe('resolved');
    });

    it('resolves by id: resolved, already resolved, not found', async () => {
      const { issues } = store();
      const { issue } = await issues.occur(burst('transform_failing', 'slack-text', 1, T0, 'TypeError'), newDeliveryId(T0));
      const outcome = await issues.resolveById(issue.id, T0 + 10);
      expect(outcome).toMatchObject({ status: 'resolved', issue: { id: issue.id, resolvedAt: T0 + 10 } });
      expect(await issues.resolveById(issue.id, T0 + 20)).toEqual({ status: 'already_resolved' });
      expect(await issues.resolveById('019ab2c4-0000-7000-8000-000000000000', T0)).toEqual({ status: 'not_found' });
      expect(await issues.resolveById('a\u0000b', T0)).toEqual({ status: 'not_found' });
      expect((await issues.get(issue.id))?.resolvedAt).toBe(T0 + 10);
    });

    it('resolves the quiet issues of the kinds asked for, and only those', async () => {
      const { issues } = store();
      await issues.occur(burst('verification_failing', 'old', 1, T0), newDeliveryId(T0));
      await issues.occur(burst('verification_failing', 'recent', 1, T0 + 60_000), newDeliveryId(T0));
      await issues.occur(burst('destination_down', 'old', 1, T0), newDeliveryId(T0));
      const resolved = await issues.resolveQuiet(['verification_failing', 'transform_failing'], T0 + 30_000, T0 + 90_000);
      expect(resolved.map((i) => [i.kind, i.subject, i.resolvedAt])).toEqual([['verification_failing', 'old', T0 + 90_000]]);
      expect(await issues.resolveQuiet(['verification_failing'], T0 + 30_000, T0 + 90_000)).toEqual([]);
      expect((await issues.countOpen()).destination_down).toBe(1);
    });

    it('lists newest first, by status, a page at a time', async () => {
      const { issues } = store();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { issue } = await issues.occur(burst('dead_letters', `d${i}`, 1, T0 + i), newDeliveryId(T0 + i));
        ids.push(issue.id);
      }
      await issues.resolve('dead_letters', 'd1', T0 + 100);
      expect((await issues.list({ limit: 10 })).map((i) => i.id)).toEqual([...ids].reverse());
      expect((await issues.list({ limit: 10, status: 'resolved' })).map((i) => i.subject)).toEqual(['d1']);
      const open = await issues.list({ limit: 2, status: 'open' });
      expect(open.map((i) => i.subject)).toEqual(['d4', 'd3']);
      const next = await issues.list({ limit: 2, status: 'open', beforeId: open[1]?.id ?? '' });
      expect(next.map((i) => i.subject)).toEqual(['d2', 'd0']);
    });

    it('keeps any text of an error and a subject as given', async () => {
      const { issues } = store();
      const text = '<script>alert(1)</script> "quoted" \u{1F600} \u00e9';
      const { issue } = await issues.occur(burst('destination_down', 'ünïcode dest', 1, T0, text), newDeliveryId(T0));
      expect((await issues.get(issue.id))?.lastError).toBe(text);
      expect((await issues.get(issue.id))?.subject).toBe('ünïcode dest');
    });
  });
}
