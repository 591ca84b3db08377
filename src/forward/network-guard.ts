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
 * reserved and documentation ranges are not; an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries, and so are
 * the NAT64 and 6to4 forms, which also lead to an IPv4 host.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.process(bare.split('%')[0] ?? bare);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const range = v6.range();
    if (range === 'rfc6052' || range === '6to4' || range === 'teredo') {
      const embedded = embeddedIpv4(v6, range);
      return embedded !== undefined && isPublicAddress(embedded);
    }
    return range === 'unicast';
  }
  return parsed.range() === 'unicast';
}

function embeddedIpv4(address: ipaddr.IPv6, range: string): string | undefined {
  const bytes = address.toByteArray();
  const v4 =
    range === '6to4' ? bytes.slice(2, 6) : range === 'teredo' ? bytes.slice(12, 16).map((b) => b ^ 0xff) : bytes.slice(12, 16);
  return v4.length === 4 ? v4.join('.') : undefined;
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
