import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { guardedLookup, isPublicAddress, PrivateNetworkError } from '../network-guard.js';

/**
 * The private-network guard (CONTRACT 6) for a broker's connections. The
 * broker clients connect with `net.connect`, which looks a name up with the
 * `lookup` it is given and connects to the address that answers: the guarded
 * lookup answers public addresses only, so what is connected to is what was
 * checked. An IP literal is never looked up, so it is checked first.
 */

/** The host of a URL as `net.connect` takes it (an IPv6 literal without its brackets). */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Throws `destination_not_allowed` for an IP literal that is not public (unless private networks are allowed). */
export function checkLiteralHost(host: string, allowPrivateNetwork: boolean): void {
  if (!allowPrivateNetwork && ipaddr.isValid(host) && !isPublicAddress(host)) throw new PrivateNetworkError(host);
}

/** The `lookup` for a broker's sockets: guarded unless private networks are allowed. */
export function brokerLookup(allowPrivateNetwork: boolean, resolve: typeof dnsLookup = dnsLookup): LookupFunction | undefined {
  return allowPrivateNetwork ? undefined : guardedLookup(resolve);
}

/**
 * The address to connect to, for a client that looks names up itself (the
 * NATS client): an IP literal as it is (checked), else the first public
 * address the name has; connecting to that address leaves DNS no say.
 */
export async function guardedAddress(host: string, allowPrivateNetwork: boolean): Promise<string> {
  checkLiteralHost(host, allowPrivateNetwork);
  const lookup = brokerLookup(allowPrivateNetwork);
  if (lookup === undefined || ipaddr.isValid(host)) return host;
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (error, addresses) => {
      const first = (addresses as unknown as LookupAddress[])[0];
      if (error !== null || first === undefined) reject(error ?? new PrivateNetworkError(host));
      else resolve(first.address);
    });
  });
}
