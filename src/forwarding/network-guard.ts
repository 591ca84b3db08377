import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

/**
 * The private-network guard (CONTRACT 6). A destination that does not say
 * `allowPrivateNetwork: true` is only ever connected to on a public unicast
 * address. It is checked three times, each on what the socket really uses:
 * an IP literal before connecting, every address a name resolves to (so a
 * name is never connected to on a private address), and the socket's
 * remote address once connected, before a byte is sent (so that a lookup
 * the guard did not see, DNS rebinding included, cannot get around it).
 */

export const GUARD_ERROR_CODE = 'destination_not_allowed';

export class PrivateNetworkError extends Error {
  readonly code = GUARD_ERROR_CODE;
  constructor(address: string) {
    super(
      `destination_not_allowed: ${address} is a private, loopback, link-local or otherwise non-public address; ` +
        'set allowPrivateNetwork: true on the destination to allow it',
    );
    this.name = 'PrivateNetworkError';
  }
}

/**
 * True for a public unicast address. Loopback, private, link-local,
 * carrier-grade NAT, unique-local, multicast, unspecified, broadcast,
 * reserved and documentation ranges are not. An IPv6 address that carries
 * an IPv4 address is judged as the IPv4 address(es) it leads to: the
 * IPv4-compatible (`::a.b.c.d`, ::/96), IPv4-mapped (::ffff:0:0/96) and
 * IPv4-translated (::ffff:0:0:0/96) forms, NAT64 (64:ff9b::/96), 6to4
 * (2002::/16) and Teredo (2001::/32: its server and its client). The
 * local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) is never public: its
 * translator is on the operator's own network, which also chooses where in
 * the address the IPv4 address goes.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded !== undefined) return embedded.length > 0 && embedded.every((v4) => v4.range() === 'unicast');
  return v6.range() === 'unicast';
}

/**
 * The IPv4 addresses an IPv6 address leads to ([] for local-use NAT64: none
 * that can be judged), or undefined when it is not one of the forms that embed one.
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const bytes = address.toByteArray();
  const v4 = (...at: number[]): ipaddr.IPv4 => new ipaddr.IPv4(at.map((i) => bytes[i] ?? 0));
  const last = v4(12, 13, 14, 15);
  const words = address.parts;
  const zeros = (from: number, to: number): boolean => words.slice(from, to).every((word) => word === 0);
  if (zeros(0, 6)) return [last]; // ::/96, IPv4-compatible (:: and ::1 are 0.0.0.0 and 0.0.0.1: not public either)
  if (zeros(0, 5) && words[5] === 0xffff) return [last]; // ::ffff:0:0/96, IPv4-mapped
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return [last]; // ::ffff:0:0:0/96, IPv4-translated
  if (words[0] === 0x64 && words[1] === 0xff9b) {
    if (zeros(2, 6)) return [last]; // 64:ff9b::/96
    if (words[2] === 1) return []; // 64:ff9b:1::/48, local-use
  }
  if (words[0] === 0x2002) return [v4(2, 3, 4, 5)]; // 6to4
  if (words[0] === 0x2001 && words[1] === 0) {
    // Teredo: the server's address, and the client's (obfuscated: each bit inverted).
    return [v4(4, 5, 6, 7), new ipaddr.IPv4([12, 13, 14, 15].map((i) => (bytes[i] ?? 0) ^ 0xff))];
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for sockets that answers only public addresses, and fails when a name has none. */
export function guardedLookup(resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      const list = addresses as LookupAddress[];
      const allowed = list.filter((entry) => isPublicAddress(entry.address));
      if (allowed.length === 0) {
        callback(new PrivateNetworkError(`${hostname} (${list.map((entry) => entry.address).join(', ') || 'no address'})`), []);
        return;
      }
      if ((options as LookupAllOptions).all === true) callback(null, allowed);
      else callback(null, allowed[0]?.address ?? '', allowed[0]?.family);
    });
  }) as LookupFunction;
}

export type Connector = buildConnector.connector;

/** undici's connector, guarded as above unless the destination allows private networks. */
export function guardedConnector(options: {
  allowPrivateNetwork: boolean;
  timeoutMs: number;
  lookup?: typeof dnsLookup;
}): Connector {
  if (options.allowPrivateNetwork) return buildConnector({ timeout: options.timeoutMs });
  const connect = buildConnector({
    timeout: options.timeoutMs,
    lookup: guardedLookup(options.lookup),
  } as buildConnector.BuildOptions);
  return (connectOptions, callback) => {
    const host = connectOptions.hostname;
    if (ipaddr.isValid(host.replace(/^\[|\]$/g, '')) && !isPublicAddress(host)) {
      callback(new PrivateNetworkError(host), null);
      return;
    }
    connect(connectOptions, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      const remote = (socket as Socket).remoteAddress;
      if (remote === undefined || !isPublicAddress(remote)) {
        socket.destroy();
        callback(new PrivateNetworkError(remote ?? host), null);
        return;
      }
      callback(null, socket);
    });
  };
}
