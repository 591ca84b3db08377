import ipaddr from 'ipaddr.js';
import { bareHost } from './publishers/broker-address.js';
import type { Destination } from './destination.js';
import { isPublicAddress } from './network-guard.js';

/**
 * Destinations that the private-network guard will refuse every time
 * (CONTRACT 6, "What can never succeed fails at once"): a host that is
 * `localhost` (or a name under `.localhost`) or a non-public IP literal,
 * without `allowPrivateNetwork: true`. `reception check-config` and the
 * server's start-up log warn of each, naming the setting to add. A name that
 * resolves to a private address is not known before it is looked up: the
 * guard refuses it at the first attempt.
 */
export interface PrivateDestinationWarning {
  destination: string;
  host: string;
  /** One line that names the destination, its host and the setting. */
  message: string;
}

export function privateDestinationWarnings(destinations: Iterable<Destination>): PrivateDestinationWarning[] {
  const warnings: PrivateDestinationWarning[] = [];
  for (const destination of destinations) {
    if (destination.allowPrivateNetwork || destination.url === undefined) continue;
    const host = bareHost(destination.url);
    const what = privateHost(host);
    if (what === undefined) continue;
    warnings.push({
      destination: destination.name,
      host,
      message:
        `destination ${destination.name}: ${destination.url.hostname} is ${what}, and the destination does not say ` +
        'allowPrivateNetwork: true: every forward to it will fail at once (destination_not_allowed); ' +
        `add allowPrivateNetwork: true to destinations.${destination.name} if that is meant`,
    });
  }
  return warnings;
}

/** What kind of non-public host this is, or undefined for a public one (or a name that only a lookup can judge). */
function privateHost(host: string): string | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'a loopback name';
  if (!ipaddr.isValid(host) || isPublicAddress(host)) return undefined;
  const range = ipaddr.process(host.split('%')[0] ?? host).range();
  return `${RANGE_NAMES[range] ?? 'a non-public'} address`;
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local',
  carrierGradeNat: 'a carrier-grade NAT',
  uniqueLocal: 'a unique-local',
  multicast: 'a multicast',
  unspecified: 'an unspecified',
};
