import { type Cidr, formatIp, type IpBytes, inCidr, ipv4At, parseCidr, parseIp } from './ip.js';

/**
 * What kind of address an endpoint reaches. Only `public` is delivered to by default; every other
 * category is a door into the host's own network (or nowhere useful).
 */
export type AddressCategory =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'carrier-grade-nat'
  | 'link-local'
  | 'cloud-metadata'
  | 'unique-local'
  | 'multicast'
  | 'reserved'
  | 'invalid';

/** The verdict on one address. */
export interface AddressClass {
  /** Canonical text of the address (for IPv4-mapped forms: the IPv6 text as given). */
  address: string;
  category: AddressCategory;
  /** The rule that matched, e.g. `10.0.0.0/8` (null for public and invalid). */
  range: string | null;
  /** Set when the verdict is about an IPv4 address embedded in an IPv6 one. */
  via?: 'ipv4-mapped' | 'nat64' | '6to4';
}

type Rule = [cidr: string, category: Exclude<AddressCategory, 'public' | 'invalid'>];

// Order matters: the first match wins, so the metadata addresses come before their wider ranges.
const V4_RULES: Rule[] = [
  ['0.0.0.0/8', 'unspecified'], // "this network"; Linux connects 0.0.0.0 to the local host
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade-nat'], // also holds Alibaba's metadata service, 100.100.100.200
  ['127.0.0.0/8', 'loopback'],
  ['169.254.169.254/32', 'cloud-metadata'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'], // includes the broadcast address 255.255.255.255
];

const V6_RULES: Rule[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'reserved'], // deprecated IPv4-compatible form
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 prefix (RFC 8215)
  ['100::/64', 'reserved'], // discard-only
  ['2001::/32', 'reserved'], // Teredo: tunnels to an obfuscated IPv4 address
  ['2001:db8::/32', 'reserved'], // documentation
  ['fd00:ec2::254/128', 'cloud-metadata'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'link-local'], // deprecated site-local
  ['ff00::/8', 'multicast'],
];

const compile = (rules: Rule[]) => rules.map(([text, category]) => ({ text, category, cidr: parseCidr(text)! }));
const V4 = compile(V4_RULES);
const V6 = compile(V6_RULES);
const MAPPED = parseCidr('::ffff:0:0/96')!;
const NAT64 = parseCidr('64:ff9b::/96')!;
const SIX_TO_FOUR = parseCidr('2002::/16')!;
const GLOBAL_UNICAST = parseCidr('2000::/3')!;

/**
 * Classifies one IP address. IPv6 forms that carry an IPv4 address the network will actually
 * reach (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that
 * IPv4 address. Any IPv6 address outside global unicast (`2000::/3`) is `reserved`: we allow what
 * is known to be public rather than list everything that is not.
 *
 * @example
 * ```ts
 * classifyAddress('::ffff:169.254.169.254').category; // 'cloud-metadata' (via 'ipv4-mapped')
 * classifyAddress('93.184.215.14').category;          // 'public'
 * ```
 */
export function classifyAddress(text: string): AddressClass {
  const ip = parseIp(text);
  if (!ip) return { address: text.slice(0, 64), category: 'invalid', range: null };
  return classifyBytes(ip);
}

export function classifyBytes(ip: IpBytes): AddressClass {
  const address = formatIp(ip);
  if (ip.family === 4) {
    const hit = V4.find((r) => inCidr(ip, r.cidr));
    return { address, category: hit?.category ?? 'public', range: hit?.text ?? null };
  }
  const embedded: Array<[Cidr, number, NonNullable<AddressClass['via']>]> = [
    [MAPPED, 12, 'ipv4-mapped'],
    [NAT64, 12, 'nat64'],
    [SIX_TO_FOUR, 2, '6to4'],
  ];
  for (const [cidr, at, via] of embedded) {
    if (inCidr(ip, cidr)) {
      const inner = classifyBytes(ipv4At(ip, at));
      return { address, category: inner.category, range: inner.range, via };
    }
  }
  const hit = V6.find((r) => inCidr(ip, r.cidr));
  if (hit) return { address, category: hit.category, range: hit.text };
  if (!inCidr(ip, GLOBAL_UNICAST)) return { address, category: 'reserved', range: 'outside 2000::/3' };
  return { address, category: 'public', range: null };
}

/** Words for messages: "a loopback address", "the cloud metadata address". */
export function describeCategory(c: AddressClass): string {
  const words: Record<AddressCategory, string> = {
    public: 'a public address',
    unspecified: 'an unspecified address (0.0.0.0 / ::)',
    loopback: 'a loopback address',
    private: 'a private-network address',
    'carrier-grade-nat': 'a carrier-grade NAT address (100.64.0.0/10)',
    'link-local': 'a link-local address',
    'cloud-metadata': 'the cloud metadata address',
    'unique-local': 'a unique-local IPv6 address',
    multicast: 'a multicast address',
    reserved: 'a reserved, non-public address',
    invalid: 'something that is not an IP address',
  };
  const via = c.via === undefined ? '' : ` (in ${c.via} IPv6 form)`;
  return words[c.category] + via;
}
