import { isIP } from 'node:net';

export interface ThrottleOptions {
  /** Wrong tokens an address may present in a row before it is throttled. */
  freeAttempts: number;
  /** A wrong token more than this long after the address's last one (and after its wait) starts the count again. */
  windowMs: number;
  /** The wait after the first wrong token past `freeAttempts`; it doubles with each further one. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** Addresses remembered at most; past it, the one whose last wrong token is oldest is forgotten. */
  maxAddresses: number;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  freeAttempts: 5,
  windowMs: 60_000,
  firstDelayMs: 1000,
  maxDelayMs: 15 * 60_000,
  maxAddresses: 10_000,
};

interface Strikes {
  count: number;
  lastAt: number;
  blockedUntil: number;
}

/**
 * Wrong API tokens per client address (the login and `Authorization:
 * Bearer`): past `freeAttempts` in a row, each further wrong token is
 * answered `429` with the seconds to wait, which double with every wrong
 * token, up to `maxDelayMs`. It never looks at a right token: that is
 * accepted at once, from a throttled address too, so that strangers who
 * share an address with the owner (a NAT, an untrusted proxy) cannot lock
 * the owner out. The answer to a wrong token is a refusal either way (401
 * or 429), so a throttled address learns nothing that a 401 would not
 * have told it.
 *
 * IPv6 addresses count by their /64 network: one host usually has a whole
 * /64 to pick addresses from.
 */
export class WrongTokenThrottle {
  private readonly strikes = new Map<string, Strikes>();
  private readonly options: ThrottleOptions;

  constructor(options: Partial<ThrottleOptions> = {}) {
    this.options = { ...DEFAULT_THROTTLE, ...options };
  }

  /** Addresses remembered (bounded by `maxAddresses`). */
  get size(): number {
    return this.strikes.size;
  }

  /**
   * Counts a wrong token from `address`. Answers 0 when it may be answered
   * `401` as usual, else the seconds to wait (for `429` and `Retry-After`).
   */
  wrongToken(address: string, now = Date.now()): number {
    const key = addressKey(address);
    const { freeAttempts, windowMs, firstDelayMs, maxDelayMs, maxAddresses } = this.options;
    let strikes = this.strikes.get(key);
    if (strikes !== undefined && now - strikes.lastAt > windowMs && now >= strikes.blockedUntil) strikes = undefined;
    strikes ??= { count: 0, lastAt: now, blockedUntil: 0 };
    strikes.count += 1;
    strikes.lastAt = now;
    // Re-inserted, so that the map's first entry is the address whose last wrong token is oldest.
    this.strikes.delete(key);
    this.strikes.set(key, strikes);
    if (this.strikes.size > maxAddresses) {
      const oldest = this.strikes.keys().next();
      if (oldest.done !== true) this.strikes.delete(oldest.value);
    }
    const over = strikes.count - freeAttempts;
    if (over <= 0) return 0;
    const delay = Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(over - 1, 40));
    strikes.blockedUntil = Math.max(strikes.blockedUntil, now + delay);
    return Math.max(1, Math.ceil((strikes.blockedUntil - now) / 1000));
  }
}

/** The address as the throttle counts it: IPv4 as is, IPv6 by its first 64 bits. */
export function addressKey(address: string): string {
  const plain = address.split('%')[0] ?? address;
  if (isIP(plain) !== 6) return plain;
  const [head = '', tail] = plain.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  // An embedded IPv4 address (the last 32 bits) stands for two groups.
  const tailLength = tailGroups.reduce((n, group) => n + (group.includes('.') ? 2 : 1), 0);
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(8 - headGroups.length - tailLength).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
