import type { InboxStore } from '../deliveries/delivery-store.js';
import type { Outbox } from '../forwarding/outbox/outbox.js';
import type { RefusalStore } from '../refusals/refusals.js';
import type { TrafficStore } from '../traffic/traffic.js';
import type { IssueStore } from '../issues/issue-store.js';

/**
 * An inbox's database: its deliveries and, in the same database and written
 * in the same transactions where they must be, the tables of the features
 * that live beside them. Both backends implement it (`sqlite-store.ts`,
 * `postgres-store.ts`); each part has its own interface and contract suite,
 * in its feature's folder.
 */
export interface InboxDatabase extends InboxStore {
  /** The forwards of the deliveries (docs/contract.md, section 6). */
  readonly outbox: Outbox;
  /** The requests refused on the webhook route (docs/contract.md, section 9), apart from the inbox. */
  readonly refusals: RefusalStore;
  /** Counts per source and minute of deliveries, refusals and forward outcomes (docs/web-page.md, "A picture of the traffic"). */
  readonly traffic: TrafficStore;
  /** The issues: something wrong a person should know of (docs/alerts.md, CONTRACT 11). */
  readonly issues: IssueStore;
}
