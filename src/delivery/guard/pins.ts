import type { LookupFunction } from 'node:net';
import { checkEndpoint } from './check.js';
import { type Guard, hostKey, type ResolvedAddress } from './guard.js';

/**
 * The addresses each host name was last checked to, handed to the socket layer as its `lookup`.
 *
 * Why: the guard and the connection must agree on the address. If the socket resolved the name
 * again, a DNS server answering "public" to the check and "127.0.0.1" to the connect (rebinding)
 * would walk straight past the guard. So the transport checks, records the checked answer here,
 * and the connection's lookup returns exactly that, never asking DNS itself.
 *
 * A name with no pin (an entry pushed out of this bounded map by many other hosts between check
 * and connect) is resolved and checked again under the fallback guard: fail closed, not open.
 */
export class AddressPins {
  readonly #pins = new Map<string, ResolvedAddress[]>();

  constructor(
    private readonly fallback: Guard,
    private readonly max = 1024,
  ) {}

  /** Records the checked addresses of `host` (most recent check wins; all of them passed). */
  set(host: string, addresses: ResolvedAddress[]): void {
    const key = hostKey(host);
    this.#pins.delete(key); // re-insert: Map order is our recency order
    this.#pins.set(key, addresses);
    if (this.#pins.size > this.max) this.#pins.delete(this.#pins.keys().next().value!);
  }

  get size(): number {
    return this.#pins.size;
  }

  /** A `net.connect` lookup that answers only with checked addresses. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const pinned = this.#pins.get(hostKey(hostname));
    const answer = pinned ? Promise.resolve(pinned) : checkEndpoint(`http://${hostname}/`, this.fallback).then((c) => c.addresses);
    answer.then(
      (all) => {
        const family = typeof options === 'number' ? options : (options?.family ?? 0);
        const wanted = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
        if (wanted.length === 0) {
          const error = Object.assign(new Error(`no IPv${family} address checked for ${hostname}`), { code: 'ENOTFOUND' });
          return callback(error, '', undefined);
        }
        if (typeof options === 'object' && options?.all)
          return callback(
            null,
            wanted.map((a) => ({ ...a })),
          );
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', undefined),
    );
  };
}
