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

/**
 * `prefix_` + 12 hex digits of milliseconds + 20 random hex digits: sorts by creation time,
 * and 80 random bits make collisions out of reach.
 */
export function newId(prefix: string, now: number): string {
  return `${prefix}_${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}${randomHex(10)}`;
}
