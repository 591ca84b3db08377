import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { guardedConnector, guardedLookup, isPublicAddress, PrivateNetworkError } from '../../../src/forwarding/network-guard.js';

describe('the private-network guard', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.9.9',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
    '::ffff:169.254.169.254',
    '[::1]',
    '64:ff9b::a00:1',
    '2002:a00:1::1',
    '192.0.2.1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '1.1.1.1'])(
    'allows the public %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  // IPv6 forms that carry an IPv4 address are judged by the address they lead to (issue 28: `[::127.0.0.1]` passed).
  it.each([
    ['::127.0.0.1', 'IPv4-compatible (::/96) loopback'],
    ['[::127.0.0.1]', 'the same, bracketed as in a URL'],
    ['::7f00:1', 'the same as a URL host writes it: new URL normalises it so'],
    ['::10.0.0.1', 'IPv4-compatible private'],
    ['::169.254.169.254', 'IPv4-compatible link-local'],
    ['::ffff:0:127.0.0.1', 'IPv4-translated (::ffff:0:0:0/96) loopback'],
    ['::ffff:0:10.0.0.1', 'IPv4-translated private'],
    ['64:ff9b::127.0.0.1', 'NAT64 (64:ff9b::/96) loopback'],
    ['64:ff9b::192.168.0.1', 'NAT64 private'],
    ['64:ff9b:1::7f00:1', 'local-use NAT64 (64:ff9b:1::/48): its translator is on a local network'],
    ['64:ff9b:1::808:808', 'local-use NAT64, even of a public address'],
    ['2002:7f00:1::1', '6to4 (2002::/16) of loopback'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'Teredo whose client is 10.0.0.1'],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'Teredo whose server is 10.0.0.1 (its client 8.8.8.8)'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['::8.8.8.8', '::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])(
    'allows %s, which leads to a public IPv4 address',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('answers only public addresses of a name, and fails a name that has none, naming the setting', async () => {
    const resolver = (answers: LookupAddress[]) =>
      ((_host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => callback(null, answers)) as never;
    const lookup = guardedLookup(
      resolver([
        { address: '10.0.0.5', family: 4 },
        { address: '93.184.216.34', family: 4 },
      ]),
    );
    const all = await new Promise<unknown>((resolve) => lookup('mixed.example', { all: true }, (_e, a) => resolve(a)));
    expect(all).toEqual([{ address: '93.184.216.34', family: 4 }]);
    const rebinding = guardedLookup(
      resolver([
        { address: '169.254.169.254', family: 4 },
        { address: '::ffff:127.0.0.1', family: 6 },
      ]),
    );
    const error = await new Promise<Error | null>((resolve) => rebinding('metadata.example', { all: true }, (e) => resolve(e)));
    expect(error).toBeInstanceOf(PrivateNetworkError);
    expect(error?.message).toMatch(/^destination_not_allowed: .*allowPrivateNetwork: true/);
  });

  it('refuses an IP literal before connecting: no socket is opened for 10.0.0.1 or 169.254.169.254', async () => {
    // The connector would open a TCP connection if the guard let it through; it must answer at once, synchronously.
    const connect = guardedConnector({ allowPrivateNetwork: false, timeoutMs: 1000 });
    for (const hostname of [
      '10.0.0.1',
      '169.254.169.254',
      '[::ffff:10.0.0.1]',
      '127.0.0.1',
      '[::127.0.0.1]',
      '[::7f00:1]',
      '[64:ff9b::7f00:1]',
    ]) {
      let answered: Error | null | undefined;
      connect(
        { hostname, host: hostname, protocol: 'http:', port: '80' } as never,
        ((error: Error | null) => {
          answered = error;
        }) as never,
      );
      expect(answered, hostname).toBeInstanceOf(PrivateNetworkError);
    }
  });
});
