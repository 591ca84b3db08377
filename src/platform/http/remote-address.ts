import { BlockList, isIP } from 'node:net';

/**
 * Which peers may speak for the client through `X-Forwarded-For`
 * (`RECEPTION_TRUSTED_PROXIES`: addresses or CIDR ranges, comma-separated).
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.split('/');
      if (address === undefined) continue;
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(bits), family);
    }
    this.empty = entries.length === 0;
  }

  trusts(address: string): boolean {
    const version = isIP(address);
    if (version === 0) return false;
    return this.list.check(address, version === 6 ? 'ipv6' : 'ipv4');
  }
}

/** Strips the IPv4-mapped IPv6 prefix so that `::ffff:1.2.3.4` reads as `1.2.3.4`. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The client's address: the socket peer, unless that peer is a trusted proxy,
 * in which case the `X-Forwarded-For` chain is walked from the right past
 * every trusted hop, and the first untrusted address is the client.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  proxies: TrustedProxies,
): string {
  let address = plain(socketAddress ?? '');
  if (proxies.empty || forwardedFor === undefined || !proxies.trusts(address)) return address;
  const chain = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => plain(hop.trim()))
    .filter((hop) => hop.length > 0);
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i] as string;
    if (isIP(hop) === 0) return address;
    address = hop;
    if (!proxies.trusts(hop)) return hop;
  }
  return address;
}

/**
 * Whether a trusted proxy says that the client reached it over https: the
 * socket peer is in RECEPTION_TRUSTED_PROXIES and the last value of its
 * `X-Forwarded-Proto` (the one that peer set; a list has one per proxy)
 * is `https`. From any other peer the header is the client's own word,
 * and is ignored.
 */
export function forwardedHttps(
  socketAddress: string | undefined,
  forwardedProto: string | string[] | undefined,
  proxies: TrustedProxies,
): boolean {
  if (proxies.empty || forwardedProto === undefined || !proxies.trusts(plain(socketAddress ?? ''))) return false;
  const values = (Array.isArray(forwardedProto) ? forwardedProto.join(',') : forwardedProto).split(',');
  return values[values.length - 1]?.trim().toLowerCase() === 'https';
}
