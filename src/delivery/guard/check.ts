import { WebhooksError } from '../../errors.js';
import { endpoint } from '../../validate.js';
import { TransportError } from '../transport-error.js';
import { classifyBytes, describeCategory } from './address.js';
import { type Guard, hostKey, type ResolvedAddress } from './guard.js';
import { formatIp, type IpBytes, inCidr, ipv4At, parseCidr, parseIp } from './ip.js';

/** An endpoint that passed the guard, and the addresses a connection to it may use. */
export interface CheckedEndpoint {
  url: URL;
  /** The URL's host as compared and pinned: lowercase, no brackets, no trailing dot. */
  host: string;
  /** The URL names an IP address itself (nothing was resolved). */
  literal: boolean;
  /** Every address the connection may go to; each one passed the guard. Never empty. */
  addresses: ResolvedAddress[];
}

const MAPPED = parseCidr('::ffff:0:0/96')!;

/**
 * The guard: refuses an endpoint whose scheme is not http(s) or whose host is, or
 * resolves to, a non-public address (see `classifyAddress`), unless the guard makes an
 * exception. A name is resolved once, here; the transport then connects only to the returned
 * addresses, so a DNS answer that changes after the check cannot redirect the connection.
 *
 * Throws a WebhooksError `ERR_ENDPOINT_NOT_ALLOWED` when refused, and a {@link TransportError}
 * (`dns` or `timeout`) when the name cannot be resolved. `signal` bounds the wait for DNS.
 *
 * @example
 * ```ts
 * await checkEndpoint('http://169.254.169.254/latest/meta-data', createGuard());
 * // throws ERR_ENDPOINT_NOT_ALLOWED: "... is the cloud metadata address ..."
 * ```
 */
export function checkEndpoint(endpoint: string | URL, guard: Guard, signal?: AbortSignal): Promise<CheckedEndpoint> {
  return checkTarget(endpoint, guard, () => signal);
}

/**
 * {@link checkEndpoint} with the DNS deadline's signal asked for only when a name must be
 * resolved: the transport builds none for an endpoint that is an address (an AbortSignal and
 * its listeners cost more than the rest of the check). With a `memo` (the transport's), what was
 * checked for the same endpoint text under the same guard is reused: see {@link CheckMemo}.
 */
export async function checkTarget(
  endpoint: string | URL,
  guard: Guard,
  signal: () => AbortSignal | undefined,
  memo?: CheckMemo,
): Promise<CheckedEndpoint> {
  const key = memo && typeof endpoint === 'string' ? endpoint : undefined;
  const known = key === undefined ? undefined : memo!.get(key, guard);
  if (known?.literal) return known.literal;
  const { url, host, ip } = known ?? parseTarget(endpoint);
  if (ip) {
    if (!allowed(ip, guard, host))
      throw refused(`endpoint address ${formatIp(ip)} is ${describeCategory(classifyBytes(ip))}${PUBLIC_ONLY}`);
    const target: CheckedEndpoint = { url, host, literal: true, addresses: [pinOf(ip)] };
    if (key !== undefined) memo!.set(key, { guard, url, host, ip, literal: target, answered: null });
    return target;
  }
  // RFC 6761: these names are loopback whatever a resolver says; no need to ask.
  if ((host === 'localhost' || host.endsWith('.localhost')) && !guard.allowPrivateNetworks && !guard.allowedNames.has(host)) {
    throw refused(`endpoint host ${host.slice(0, 253)} is a loopback name${PUBLIC_ONLY}`);
  }
  const answers = await resolve(host, guard, signal());
  if (known?.answered && sameAnswers(known.answered.answers, answers)) return known.answered.target;
  const addresses: ResolvedAddress[] = [];
  for (const a of answers) {
    const parsed = typeof a?.address === 'string' ? parseIp(a.address) : null;
    // A non-address answer cannot be connected to; refusing it beats guessing what it means.
    if (!parsed || !allowed(parsed, guard, host)) {
      const verdict = parsed ? describeCategory(classifyBytes(parsed)) : 'something that is not an IP address';
      // The category, not the address: the message reaches the account holder, and the address
      // may be an internal one the account holder's DNS (or a CNAME into ours) pointed at.
      throw refused(`endpoint host ${host.slice(0, 253)} resolves to ${verdict}${PUBLIC_ONLY}`);
    }
    addresses.push(pinOf(parsed));
  }
  if (addresses.length === 0) throw new TransportError('dns', `could not resolve ${host.slice(0, 253)} (no addresses)`);
  const target: CheckedEndpoint = { url, host, literal: false, addresses };
  if (key !== undefined)
    memo!.set(key, { guard, url, host, ip: null, literal: null, answered: { answers: answers.map((a) => a.address), target } });
  return target;
}

/** One endpoint text as {@link CheckMemo} keeps it. */
interface Checked {
  guard: Guard;
  url: URL;
  host: string;
  ip: IpBytes | null;
  /** An address endpoint that passed: the same text and guard always get the same answer. */
  literal: CheckedEndpoint | null;
  /** A name that passed, with the resolver's answer it passed with (the addresses as they were given). */
  answered: { answers: readonly string[]; target: CheckedEndpoint } | null;
}

/**
 * The transport's memory of endpoints that passed the guard, so the next delivery to one does
 * not parse and check it all again (remembering costs a fraction of checking again). Kept per
 * endpoint text, for the guard it was checked under:
 * - an **address** endpoint's verdict depends on nothing else: it is reused as is;
 * - a **name** is still resolved at every attempt (the resolver decides how long an answer
 *   lives); only when the answer is the same list of addresses as last time is last time's
 *   verdict reused. Any other answer is checked in full, so rebinding gains nothing.
 * Refusals are never kept: each throws again at the next attempt, checked anew. At most `max`
 * endpoints, the one kept longest dropped first.
 */
export class CheckMemo {
  readonly #entries = new Map<string, Checked>();

  constructor(private readonly max = 1024) {}

  get(endpoint: string, guard: Guard): Checked | undefined {
    const entry = this.#entries.get(endpoint);
    return entry?.guard === guard ? entry : undefined;
  }

  set(endpoint: string, entry: Checked): void {
    this.#entries.delete(endpoint); // re-insert: Map order is the order they were kept in
    this.#entries.set(endpoint, entry);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

function sameAnswers(known: readonly string[], answers: readonly ResolvedAddress[]): boolean {
  if (known.length !== answers.length) return false;
  for (let i = 0; i < known.length; i++) if (answers[i]?.address !== known[i]) return false;
  return true;
}

/** The URL, its host as compared, and the address it names (null for a name). */
function parseTarget(endpoint: string | URL): { url: URL; host: string; ip: IpBytes | null } {
  const url = parseUrl(endpoint);
  const host = hostKey(url.hostname);
  return { url, host, ip: parseIp(host) };
}

/**
 * The creation-time check (webhooks.create / update). Same rules as {@link checkEndpoint}, but a
 * name that does not resolve (yet) is accepted: DNS is often set up after the webhook, and every
 * delivery checks again anyway. With `allowPrivateNetworks` nothing is resolved at all.
 */
export async function assertEndpointAllowed(endpoint: string, guard: Guard): Promise<void> {
  const url = parseUrl(endpoint);
  if (guard.allowPrivateNetworks || guard.allowedNames.has(hostKey(url.hostname))) return;
  try {
    await checkEndpoint(url, guard, AbortSignal.timeout(guard.resolveTimeoutMs));
  } catch (error) {
    if (error instanceof TransportError) return;
    throw error;
  }
}

/**
 * The same rules, and the same error for the same mistake, as when the webhook was saved
 * (`validate.ts`): one URL check, not two that disagree.
 */
function parseUrl(value: string | URL): URL {
  if (typeof value === 'string') return new URL(endpoint(value));
  if (value.protocol !== 'http:' && value.protocol !== 'https:') return new URL(endpoint(value.href)); // throws the same error
  return value;
}

function allowed(ip: IpBytes, guard: Guard, host: string): boolean {
  if (guard.allowPrivateNetworks || guard.allowedNames.has(host)) return true;
  const v4 = inCidr(ip, MAPPED) ? ipv4At(ip, 12) : null;
  if (guard.allowedBlocks.some((b) => inCidr(ip, b) || (v4 !== null && inCidr(v4, b)))) return true;
  return classifyBytes(ip).category === 'public';
}

async function resolve(host: string, guard: Guard, signal: AbortSignal | undefined): Promise<ResolvedAddress[]> {
  let answers: unknown;
  try {
    answers = await withDeadline(
      Promise.resolve().then(() => guard.resolver(host)),
      signal,
    );
  } catch (error) {
    if (signal?.aborted) throw new TransportError('timeout', `no DNS answer for ${host.slice(0, 253)} in time`, { cause: error });
    const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'ERROR';
    throw new TransportError('dns', `could not resolve ${host.slice(0, 253)} (${code})`, { cause: error });
  }
  if (!Array.isArray(answers)) throw new TransportError('dns', `could not resolve ${host.slice(0, 253)} (resolver gave no list)`);
  return answers as ResolvedAddress[];
}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Ends every refusal. It names the option that lifts the rule, as a developer whose first webhook
 * points at localhost needs to read (over HTTP this reaches the account holder too: only the
 * option's name, nothing of the host's network).
 */
const PUBLIC_ONLY = '; webhooks are delivered only to public addresses (in development, allowPrivateNetworks: true allows others)';

function refused(message: string): WebhooksError {
  return new WebhooksError('ERR_ENDPOINT_NOT_ALLOWED', message, { field: 'endpoint' });
}

/** The address to connect to; an IPv4-mapped IPv6 address is dialled as the IPv4 it means. */
function pinOf(ip: IpBytes): ResolvedAddress {
  const plain = ip.family === 6 && inCidr(ip, MAPPED) ? ipv4At(ip, 12) : ip;
  return { address: formatIp(plain), family: plain.family };
}
