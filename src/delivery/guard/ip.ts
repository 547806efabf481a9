import { isIPv4, isIPv6 } from 'node:net';

/**
 * An IP address as bytes: 4 for IPv4, 16 for IPv6. Parsed here rather than with string tricks so
 * every spelling of one address (`::ffff:127.0.0.1`, `::ffff:7f00:1`, `[::FFFF:7F00:0001]`) ends
 * up as the same bytes before any rule looks at it.
 */
export interface IpBytes {
  family: 4 | 6;
  bytes: Uint8Array;
}

/**
 * Parses a textual IP address (IPv6 may be bracketed and may carry a `%zone`). Returns null for
 * anything that is not a strict IPv4 dotted quad or a valid IPv6 address: the legacy IPv4 forms
 * (`0x7f.1`, `2130706433`, `0177.0.0.1`) are normalised by the WHATWG URL parser before we see a
 * host, and a resolver that answers with them is treated as having answered nonsense.
 */
export function parseIp(text: string): IpBytes | null {
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (isIPv4(s)) return { family: 4, bytes: Uint8Array.from(s.split('.').map(Number)) };
  if (isIPv6(s)) return { family: 6, bytes: parseIPv6(s) };
  return null;
}

function parseIPv6(s: string): Uint8Array {
  // isIPv6 has validated the shape; this only rewrites a trailing dotted quad and expands `::`.
  let text = s;
  if (text.includes('.')) {
    const colon = text.lastIndexOf(':');
    const [a = 0, b = 0, c = 0, d = 0] = text
      .slice(colon + 1)
      .split('.')
      .map(Number);
    text = `${text.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left = '', right] = text.split('::');
  const parts = (p: string) => (p === '' ? [] : p.split(':'));
  const l = parts(left);
  const r = right === undefined ? [] : parts(right);
  const groups = right === undefined ? l : [...l, ...new Array<string>(8 - l.length - r.length).fill('0'), ...r];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  return out;
}

/** Canonical text: dotted quad, or RFC 5952 compressed lowercase IPv6 (for messages and pins). */
export function formatIp(ip: IpBytes): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.');
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!);
  // Longest run of two or more zero groups becomes `::` (first one on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  return best === -1 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** A CIDR block, e.g. `10.0.0.0/8` or `fc00::/7`. */
export interface Cidr {
  base: IpBytes;
  prefix: number;
}

/** Parses `addr/prefix` (or a bare address, as a single-address block); null if malformed. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const base = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (!base) return null;
  const max = base.family === 4 ? 32 : 128;
  const rest = slash === -1 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(rest)) return null;
  const prefix = Number(rest);
  return prefix <= max ? { base, prefix } : null;
}

/** True when `ip` lies inside `cidr` (same family only; see `embeddedIPv4` for mapped forms). */
export function inCidr(ip: IpBytes, cidr: Cidr): boolean {
  if (ip.family !== cidr.base.family) return false;
  const full = cidr.prefix >> 3;
  for (let i = 0; i < full; i++) if (ip.bytes[i] !== cidr.base.bytes[i]) return false;
  const bits = cidr.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (ip.bytes[full]! & mask) === (cidr.base.bytes[full]! & mask);
}

/** The IPv4 address in bytes `from..from+4` of an IPv6 address. */
export function ipv4At(ip: IpBytes, from: number): IpBytes {
  return { family: 4, bytes: ip.bytes.slice(from, from + 4) };
}
