import { describe, expect, it } from 'vitest';
import { clientAddress, forwardedHttps, TrustedProxies } from '../../../src/platform/http/remote-address.js';

const none = new TrustedProxies([]);

describe('clientAddress', () => {
  describe('without trusted proxies', () => {
    it('is the socket peer, whatever X-Forwarded-For claims', () => {
      expect(clientAddress('198.51.100.4', '203.0.113.7', none)).toBe('198.51.100.4');
      expect(clientAddress('198.51.100.4', undefined, none)).toBe('198.51.100.4');
    });

    it('drops the IPv4-mapped IPv6 prefix', () => {
      expect(clientAddress('::ffff:127.0.0.1', undefined, none)).toBe('127.0.0.1');
    });

    it('keeps a real IPv6 address as it is', () => {
      expect(clientAddress('2001:db8::1', undefined, none)).toBe('2001:db8::1');
      expect(clientAddress('::ffff:zz', undefined, none)).toBe('::ffff:zz');
    });

    it('is empty when the socket has no address', () => {
      expect(clientAddress(undefined, '203.0.113.7', none)).toBe('');
    });
  });

  describe('behind a trusted proxy', () => {
    const proxy = new TrustedProxies(['10.0.0.1']);

    it('is the address the proxy forwarded', () => {
      expect(clientAddress('10.0.0.1', '203.0.113.7', proxy)).toBe('203.0.113.7');
    });

    it('ignores X-Forwarded-For from a peer that is not trusted', () => {
      expect(clientAddress('10.0.0.2', '203.0.113.7', proxy)).toBe('10.0.0.2');
    });

    it('takes the rightmost untrusted hop, so that a sender cannot spoof by prepending', () => {
      expect(clientAddress('10.0.0.1', '1.1.1.1, 203.0.113.7', proxy)).toBe('203.0.113.7');
    });

    it('is the socket peer when the header is missing or empty', () => {
      expect(clientAddress('10.0.0.1', undefined, proxy)).toBe('10.0.0.1');
      expect(clientAddress('10.0.0.1', '', proxy)).toBe('10.0.0.1');
      expect(clientAddress('10.0.0.1', ' , ,', proxy)).toBe('10.0.0.1');
    });

    it('reads several header lines as one chain', () => {
      expect(clientAddress('10.0.0.1', ['198.51.100.9', '203.0.113.7'], proxy)).toBe('203.0.113.7');
    });

    it('trusts a proxy that connects over an IPv4-mapped IPv6 socket', () => {
      expect(clientAddress('::ffff:10.0.0.1', '203.0.113.7', proxy)).toBe('203.0.113.7');
    });

    it('drops the IPv4-mapped prefix of a forwarded hop', () => {
      expect(clientAddress('10.0.0.1', '::ffff:203.0.113.7', proxy)).toBe('203.0.113.7');
    });
  });

  describe('a chain of trusted proxies (CIDR)', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8', '192.168.1.0/24']);

    it('walks from the right past every trusted hop', () => {
      expect(clientAddress('10.1.2.3', '198.51.100.1, 192.168.1.77, 10.9.9.9', proxies)).toBe('198.51.100.1');
    });

    it('stops at the first untrusted hop from the right, even with trusted ones further left', () => {
      expect(clientAddress('10.1.2.3', '10.5.5.5, 198.51.100.1, 10.9.9.9', proxies)).toBe('198.51.100.1');
    });

    it('is the leftmost hop when every hop is trusted', () => {
      expect(clientAddress('10.1.2.3', '10.7.7.7, 192.168.1.5', proxies)).toBe('10.7.7.7');
    });

    it('does not trust addresses just outside a range', () => {
      expect(clientAddress('192.168.2.1', '203.0.113.7', proxies)).toBe('192.168.2.1');
      expect(clientAddress('11.0.0.1', '203.0.113.7', proxies)).toBe('11.0.0.1');
    });
  });

  describe('IPv6 proxies', () => {
    const proxies = new TrustedProxies(['2001:db8::/32', '::1']);

    it('trusts an IPv6 range and an IPv6 address', () => {
      expect(clientAddress('2001:db8:1::5', '2606:4700::1111', proxies)).toBe('2606:4700::1111');
      expect(clientAddress('::1', '2001:db8:ffff::2, 2606:4700::1111', proxies)).toBe('2606:4700::1111');
    });

    it('walks past trusted IPv6 hops to an IPv4 client', () => {
      expect(clientAddress('::1', '203.0.113.7, 2001:db8::9', proxies)).toBe('203.0.113.7');
    });

    it('does not trust an IPv6 address outside the range', () => {
      expect(clientAddress('2001:db9::1', '203.0.113.7', proxies)).toBe('2001:db9::1');
    });
  });

  describe('junk in the chain', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8']);

    it('stops at a hop that is not an IP address and keeps the last trusted one', () => {
      expect(clientAddress('10.0.0.1', '203.0.113.7, not-an-ip', proxies)).toBe('10.0.0.1');
      expect(clientAddress('10.0.0.1', '203.0.113.7, garbage, 10.0.0.2', proxies)).toBe('10.0.0.2');
    });

    it('never returns the junk itself', () => {
      for (const junk of ['unknown', '<script>', '203.0.113.7:443', '[2001:db8::1]', '999.1.1.1', 'a'.repeat(500)]) {
        const address = clientAddress('10.0.0.1', junk, proxies);
        expect(address).toBe('10.0.0.1');
      }
    });

    it('ignores junk to the left of the client', () => {
      expect(clientAddress('10.0.0.1', 'garbage, 203.0.113.7', proxies)).toBe('203.0.113.7');
    });
  });
});

describe('TrustedProxies', () => {
  it('is empty without entries', () => {
    expect(none.empty).toBe(true);
    expect(new TrustedProxies(['10.0.0.1']).empty).toBe(false);
  });

  it('trusts what it lists and nothing else', () => {
    const proxies = new TrustedProxies(['172.16.0.0/12', 'fd00::/8']);
    expect(proxies.trusts('172.31.255.255')).toBe(true);
    expect(proxies.trusts('172.32.0.0')).toBe(false);
    expect(proxies.trusts('fd12:3456::1')).toBe(true);
    expect(proxies.trusts('fe80::1')).toBe(false);
    expect(proxies.trusts('not-an-ip')).toBe(false);
    expect(proxies.trusts('')).toBe(false);
  });
});

describe('forwardedHttps', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '2001:db8::1']);

  it('believes X-Forwarded-Proto from a trusted peer, IPv4-mapped or IPv6 included', () => {
    expect(forwardedHttps('10.1.2.3', 'https', proxies)).toBe(true);
    expect(forwardedHttps('::ffff:10.1.2.3', 'https', proxies)).toBe(true);
    expect(forwardedHttps('2001:db8::1', ' HTTPS ', proxies)).toBe(true);
    expect(forwardedHttps('10.1.2.3', ['http', 'https'], proxies)).toBe(true);
  });

  it('takes the last value of a list: the one the trusted peer set', () => {
    expect(forwardedHttps('10.1.2.3', 'http, https', proxies)).toBe(true);
    expect(forwardedHttps('10.1.2.3', 'https, http', proxies)).toBe(false);
    expect(forwardedHttps('10.1.2.3', ['https', 'http'], proxies)).toBe(false);
  });

  it('ignores the header from any other peer, and without trusted proxies', () => {
    expect(forwardedHttps('198.51.100.4', 'https', proxies)).toBe(false);
    expect(forwardedHttps('::ffff:198.51.100.4', 'https', proxies)).toBe(false);
    expect(forwardedHttps(undefined, 'https', proxies)).toBe(false);
    expect(forwardedHttps('10.1.2.3', 'https', none)).toBe(false);
  });

  it('is false without the header or with another protocol', () => {
    expect(forwardedHttps('10.1.2.3', undefined, proxies)).toBe(false);
    expect(forwardedHttps('10.1.2.3', '', proxies)).toBe(false);
    expect(forwardedHttps('10.1.2.3', 'http', proxies)).toBe(false);
    expect(forwardedHttps('10.1.2.3', 'httpsx', proxies)).toBe(false);
  });
});
