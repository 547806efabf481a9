import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { classifyAddress } from '../../src/delivery/guard/address.js';
import { createGuard } from '../../src/delivery/guard/guard.js';
import { formatIp, inCidr, parseCidr, parseIp } from '../../src/delivery/guard/ip.js';

// Which addresses the network guard refuses. Pure functions; the socket-level proofs are in
// ssrf.test.ts.

const blocked: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.1.1', 'link-local'],
  ['169.254.169.254', 'cloud-metadata'],
  ['100.64.0.1', 'carrier-grade-nat'],
  ['100.127.255.255', 'carrier-grade-nat'],
  ['100.100.100.200', 'carrier-grade-nat'], // Alibaba metadata
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.10', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fec0::1', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['fd00:ec2::254', 'cloud-metadata'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['[::FFFF:7F00:0001]', 'loopback'],
  ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'cloud-metadata'],
  ['::ffff:a9fe:a9fe', 'cloud-metadata'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:100.64.0.1', 'carrier-grade-nat'],
  ['::ffff:224.0.0.1', 'multicast'],
  ['64:ff9b::7f00:1', 'loopback'], // NAT64 of 127.0.0.1
  ['64:ff9b::169.254.169.254', 'cloud-metadata'],
  ['64:ff9b:1::1', 'private'],
  ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
  ['2002:a9fe:a9fe::', 'cloud-metadata'],
  ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible
  ['::ffff:0:7f00:1', 'reserved'], // IPv4-translated: outside global unicast
  ['2001:db8::1', 'reserved'],
  ['2001::1', 'reserved'], // Teredo
  ['100::1', 'reserved'],
  ['1::1', 'reserved'],
  ['4000::1', 'reserved'],
];

const publicOnes = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '169.253.255.255',
  '192.167.255.255',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('address classification', () => {
  test.each(blocked)('%s is refused as %s', (address, category) => {
    expect(classifyAddress(address).category).toBe(category);
  });

  test.each(publicOnes)('%s is public', (address) => {
    expect(classifyAddress(address).category).toBe('public');
  });

  test.each(['localhost', '0x7f.1', '2130706433', '0177.0.0.1', '01.02.03.04', '', '1.2.3', '::ffff:1.2.3.4.5', '1.2.3.4/8'])(
    '%j is not an address (refused, never guessed at)',
    (text) => {
      expect(classifyAddress(text).category).toBe('invalid');
    },
  );

  test('IPv6 text round-trips through our parser exactly as the WHATWG URL parser canonicalises it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const ip = { family: 6 as const, bytes };
        const text = formatIp(ip);
        expect(new URL(`http://[${text}]/`).hostname).toBe(`[${text}]`);
        expect(parseIp(text)!.bytes).toEqual(bytes);
        // The dotted-tail spelling of the same bytes parses to the same address.
        const head = Array.from({ length: 6 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
        const dotted = `${head.join(':')}:${Array.from(bytes.slice(12)).join('.')}`;
        expect(parseIp(dotted)!.bytes).toEqual(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  test('every IPv4 address: our verdict agrees with node:net BlockList over the same ranges, mapped form included', () => {
    const list = new BlockList();
    for (const [cidr, prefix] of [
      ['0.0.0.0', 8],
      ['10.0.0.0', 8],
      ['100.64.0.0', 10],
      ['127.0.0.0', 8],
      ['169.254.0.0', 16],
      ['172.16.0.0', 12],
      ['192.0.0.0', 24],
      ['192.0.2.0', 24],
      ['192.168.0.0', 16],
      ['198.18.0.0', 15],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
      ['224.0.0.0', 4],
      ['240.0.0.0', 4],
    ] as const)
      list.addSubnet(cidr, prefix, 'ipv4');
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        const refused = classifyAddress(address).category !== 'public';
        expect(refused).toBe(list.check(address, 'ipv4'));
        expect(classifyAddress(`::ffff:${address}`).category !== 'public').toBe(refused);
      }),
      { numRuns: 5000 },
    );
  });

  test('CIDR matching', () => {
    const block = parseCidr('10.20.0.0/16')!;
    expect(inCidr(parseIp('10.20.255.1')!, block)).toBe(true);
    expect(inCidr(parseIp('10.21.0.1')!, block)).toBe(false);
    expect(inCidr(parseIp('fd00::1')!, parseCidr('fc00::/7')!)).toBe(true);
    expect(parseCidr('10.0.0.0/33')).toBeNull();
    expect(parseCidr('10.0.0.0/x')).toBeNull();
  });
});

describe('policy options', () => {
  test('allowHosts takes host names, addresses and CIDR blocks; anything else is a TypeError at startup', () => {
    const p = createGuard({ allowHosts: ['Hooks.Internal.Example.', '10.1.2.3', '10.20.0.0/16', 'fd00::/8'] });
    expect([...p.allowedNames]).toEqual(['hooks.internal.example']);
    expect(p.allowedBlocks).toHaveLength(3);
    for (const bad of ['http://x.example', 'x.example:8080', 'x.example/path', 'user@x.example', '', 'a b', 42]) {
      expect(() => createGuard({ allowHosts: [bad as string] })).toThrow(TypeError);
    }
    expect(() => createGuard({ allowPrivateNetworks: 'yes' as unknown as boolean })).toThrow(TypeError);
    expect(() => createGuard({ resolver: 'dns' as never })).toThrow(TypeError);
  });
});
