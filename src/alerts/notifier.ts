import type { IssueChange } from '../issues/issue-signals.js';
import type { NewDelivery } from '../deliveries/delivery-store.js';
import { newDeliveryId } from '../deliveries/delivery-id.js';
import type { Logger } from '../platform/observe/logger.js';
import type { NotifyTarget } from './alerts.js';
import { ISSUES_SOURCE, issueEvent } from './issue-event.js';

/** Where a notification is stored: the write queue's `enqueue` (the delivery and its forwards in one transaction). */
export interface NotificationQueue {
  enqueue(delivery: NewDelivery): Promise<unknown>;
}

/**
 * Hands each issue that opens or resolves to the `alerts.notify`
 * destinations THROUGH THE OUTBOX (CONTRACT 11, docs/alerts.md
 * "Notifications"): the event is stored as a delivery of the reserved source
 * `reception:issues`, with one forward per destination (with its transform)
 * in the same transaction, so that it gets retries, dead letters, transforms
 * and signing as any forward does, and shows in the inbox.
 */
export class Notifier {
  constructor(
    private readonly deps: {
      queue: NotificationQueue;
      /** The notify destinations in force (a reload may change them). */
      targets: () => readonly NotifyTarget[];
      logger: Logger;
    },
  ) {}

  /** Stores the change's event with its forwards; resolves once committed (never rejects: a failure is logged). */
  async notify(change: IssueChange): Promise<void> {
    const targets = this.deps.targets();
    if (targets.length === 0) return;
    const event = issueEvent(change);
    const delivery: NewDelivery = {
      id: newDeliveryId(),
      source: ISSUES_SOURCE,
      receivedAt: Date.now(),
      method: 'POST',
      query: '',
      contentType: 'application/json',
      remoteAddress: '',
      headers: [['content-type', 'application/json']],
      raw: Buffer.from(JSON.stringify(event), 'utf8'),
      verification: { status: 'none' },
      // The same change told twice (two instances, a repeat) is one notification.
      dedupKey: `${change.type}:${change.issue.id}`,
      eventType: change.type,
      forwards: targets.map(({ destination, transform }) => ({ id: newDeliveryId(), destination, transform })),
    };
    try {
      await this.deps.queue.enqueue(delivery);
    } catch (error) {
      this.deps.logger.error(
        { issue: change.issue.id, type: change.type, problem: error instanceof Error ? error.message : String(error) },
        'issues: the notification could not be stored, so it is not sent',
      );
    }
  }
}
