import { randomBytes } from 'node:crypto';

/** Random bytes drawn 4 KiB at a time: one call per ~400 ids instead of one per id (ids are not secrets). */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let at = 0;

function randomHex(bytes: number): string {
  if (at + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    at = 0;
  }
  const hex = pool.toString('hex', at, at + bytes);
  at += bytes;
  return hex;
}

/** The millisecond and random digits of the last id made in this process (see newId). */
let lastMs = -1;
let lastRandom = '';
const RANDOM_MAX = 16n ** 20n - 1n;

/**
 * `prefix_` + 12 hex digits of milliseconds + 20 random hex digits: sorts by creation time,
 * and 80 random bits make collisions out of reach. Ids made in this process within one
 * millisecond sort in the order they were made (the random part of the previous one plus one,
 * like a monotonic ULID): a webhook created right after another is listed after it, whatever its
 * random digits. Across processes, ids of the same millisecond sort at random.
 */
export function newId(prefix: string, now: number): string {
  const ms = Math.max(0, Math.floor(now));
  let random: string;
  if (ms === lastMs && BigInt(`0x${lastRandom}`) < RANDOM_MAX) random = (BigInt(`0x${lastRandom}`) + 1n).toString(16).padStart(20, '0');
  else random = randomHex(10);
  lastMs = ms;
  lastRandom = random;
  return `${prefix}_${ms.toString(16).padStart(12, '0')}${random}`;
}
