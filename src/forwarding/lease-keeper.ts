import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/observe/logger.js';
import type { Outbox } from './outbox/outbox.js';

/** How long a push dispatcher's claim belongs to this instance unless renewed (RECEPTION_FORWARD_LEASE_MS). */
export const DEFAULT_LEASE_MS = 10_000;
/** How much of the lease must be left, certain, for an attempt to start on a forward. */
const START_MARGIN_FRACTION = 0.2;

/**
 * The push leases of one instance (CONTRACT 6 "After a crash"): each start
 * has its own id, written as the `lease_owner` of every forward its
 * dispatchers claim; every third of the lease, one statement extends all of
 * them. An instance that dies stops renewing, and its leases run out within
 * `leaseMs`: another instance (or the restarted one, on PostgreSQL) takes
 * them over at its next claim, which each dispatcher makes at least every
 * second. Pull consumers' leases have no owner and are never renewed.
 */
export class LeaseKeeper {
  readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  /** The last renewal that succeeded: when its statement was sent, the expiry it set, and the forwards it extended. */
  private renewed: { sentAt: number; until: number; ids: ReadonlySet<string> } | undefined;

  constructor(
    private readonly outbox: Outbox,
    private readonly logger: Logger,
    readonly leaseMs = DEFAULT_LEASE_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3))).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
  }

  /**
   * Until when a forward claimed at `claimedAt` (ms, once its claim had
   * committed) with a lease until `claimedUntil` is surely this instance's:
   * that, or the expiry set by the last renewal if it was sent after the
   * claim and extended this forward.
   */
  certainUntil(forwardId: string, claimedAt: number, claimedUntil: number): number {
    const renewed = this.renewed;
    return renewed !== undefined && renewed.sentAt > claimedAt && renewed.ids.has(forwardId)
      ? Math.max(claimedUntil, renewed.until)
      : claimedUntil;
  }

  /**
   * Whether an attempt may start on a forward of that claim: enough of its
   * lease is certainly left (a fifth of it). Else renewals have been failing
   * nearly as long as a lease lasts, and another instance may take it over.
   */
  mayStart(forwardId: string, claimedAt: number, claimedUntil: number, now = Date.now()): boolean {
    return this.certainUntil(forwardId, claimedAt, claimedUntil) - now >= this.leaseMs * START_MARGIN_FRACTION;
  }

  /** Extends every lease of this instance; one at a time (a slow store does not pile them up). */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const sentAt = Date.now();
    const until = sentAt + this.leaseMs;
    try {
      const ids = await this.outbox.renewLeases(this.owner, until);
      this.renewed = { sentAt, until, ids: new Set(ids) };
    } catch (error) {
      this.logger.warn(
        { problem: error instanceof Error ? error.message : String(error) },
        'forwarding: leases could not be renewed; forwards whose lease runs out are handed back unattempted',
      );
    }
  }
}
