import { lookup } from 'node:dns/promises';
import { type Cidr, parseCidr } from './ip.js';

/** One answer of a {@link Resolver}. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Turns a host name into addresses. The default is the operating system's resolver
 * (`dns.lookup` with `all: true`, what Node itself connects with); tests inject their own to
 * play DNS rebinding against the guard.
 *
 * @example
 * ```ts
 * const resolver: Resolver = async (host) => (host === 'hooks.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
 * ```
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * The operating system's resolver, as Node connects with it: `/etc/hosts`, then DNS.
 *
 * @example
 * ```ts
 * await systemResolver('localhost'); // [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]
 * ```
 */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Answers of `resolver` kept for `ttlMs` (non-empty ones only; a failure is asked again next
 * time), and one question in flight per name however many deliveries ask at once. The guard
 * still checks every answer at every attempt and the connection still dials only what it
 * checked, so a cached answer changes nothing about what may be reached; it only delays seeing a
 * new DNS answer by up to `ttlMs`. At most `maxNames` names are kept, the oldest dropped first.
 */
export function cachingResolver(
  resolver: Resolver,
  { ttlMs, maxNames = 10_000, now = Date.now }: { ttlMs: number; maxNames?: number; now?: () => number },
): Resolver {
  const cache = new Map<string, { at: number; answers: Promise<ResolvedAddress[]> }>();
  return (hostname) => {
    const t = now();
    const hit = cache.get(hostname);
    if (hit && t - hit.at < ttlMs) return hit.answers;
    cache.delete(hostname);
    // Forget this question's entry (not a newer one for the same name) when it is no use.
    const forget = () => cache.get(hostname) === entry && cache.delete(hostname);
    const answers = Promise.resolve()
      .then(() => resolver(hostname))
      .then(
        (list) => {
          if (!Array.isArray(list) || list.length === 0) forget();
          return list;
        },
        (error: unknown) => {
          forget();
          throw error;
        },
      );
    const entry = { at: t, answers };
    cache.set(hostname, entry);
    if (cache.size > maxNames) cache.delete(cache.keys().next().value!);
    return answers;
  };
}

/**
 * What the guard resolves with when given no resolver: {@link systemResolver}, its answers kept
 * 10 s. `dns.lookup` runs `getaddrinfo` in libuv's thread pool (4 threads, shared with RS256
 * signing), and most systems do not cache it: asking once per delivery cost a thread-pool round
 * trip per attempt, or a DNS round trip where nothing caches.
 */
export const defaultResolver: Resolver = cachingResolver(systemResolver, { ttlMs: 10_000 });

/** How the engine decides where it may connect. See SECURITY.md. */
export interface GuardOptions {
  /**
   * Deliver to loopback, private, link-local and other non-public addresses too. Development and
   * tests only: with it, an account holder can make your server POST to anything on your network.
   */
  allowPrivateNetworks?: boolean;
  /**
   * Exceptions to the guard, for receivers you run yourself on a private network. An entry is a
   * host name (exact match, e.g. `hooks.internal.example`: any address it resolves to is allowed),
   * an IP address, or a CIDR block (`10.20.0.0/16`: those addresses are allowed however reached).
   */
  allowHosts?: readonly string[];
  /**
   * Name resolution; default {@link systemResolver} with its answers kept 10 s
   * (`defaultResolver`). A resolver you pass is asked at every attempt, as is.
   */
  resolver?: Resolver;
  /** How long the creation-time check waits for DNS, in milliseconds. Default 5 s. */
  resolveTimeoutMs?: number;
}

/** Validated, frozen {@link GuardOptions}. Build with {@link createGuard}. */
export interface Guard {
  readonly allowPrivateNetworks: boolean;
  readonly allowedNames: ReadonlySet<string>;
  readonly allowedBlocks: readonly Cidr[];
  readonly resolver: Resolver;
  readonly resolveTimeoutMs: number;
}

/**
 * Checks and snapshots guard options; throws a TypeError naming the bad entry.
 *
 * @example
 * ```ts
 * const guard = createGuard({ allowHosts: ['hooks.internal.example', '10.20.0.0/16'] });
 * ```
 */
export function createGuard(options: GuardOptions = {}, where = 'createWebhooks'): Guard {
  const { allowPrivateNetworks = false, allowHosts = [], resolver = defaultResolver, resolveTimeoutMs = 5000 } = options;
  if (typeof allowPrivateNetworks !== 'boolean') throw new TypeError(`${where}: allowPrivateNetworks must be a boolean`);
  if (!Array.isArray(allowHosts)) throw new TypeError(`${where}: allowHosts must be an array of host names, IP addresses or CIDR blocks`);
  if (typeof resolver !== 'function')
    throw new TypeError(`${where}: resolver must be a function (hostname) => Promise<{ address, family }[]>`);
  if (!Number.isInteger(resolveTimeoutMs) || resolveTimeoutMs <= 0)
    throw new TypeError(`${where}: resolveTimeoutMs must be a positive integer`);
  const allowedNames = new Set<string>();
  const allowedBlocks: Cidr[] = [];
  allowHosts.forEach((entry, i) => {
    const bad = () => new TypeError(`${where}: allowHosts[${i}] must be a host name, an IP address or a CIDR block`);
    if (typeof entry !== 'string' || entry.length === 0 || entry.length > 253) throw bad();
    const block = parseCidr(entry);
    if (block) {
      allowedBlocks.push(block);
      return;
    }
    // A bare host name: no scheme, port, path or user info (the allow-list is about hosts).
    if (/[/?#@:\\\s]/.test(entry) || !URL.canParse(`http://${entry}/`)) throw bad();
    allowedNames.add(hostKey(new URL(`http://${entry}/`).hostname));
  });
  return Object.freeze({ allowPrivateNetworks, allowedNames, allowedBlocks: Object.freeze(allowedBlocks), resolver, resolveTimeoutMs });
}

/** The guard every default transport starts from: public addresses only, system DNS (cached 10 s). */
export const DEFAULT_GUARD: Guard = createGuard({}, 'httpTransport');

/** A host name as we compare it: lowercase, without brackets or a trailing dot. */
export function hostKey(hostname: string): string {
  let h = hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}
