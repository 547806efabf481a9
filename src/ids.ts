import { randomBytes } from 'node:crypto';

/**
 * `prefix_` + 12 hex digits of milliseconds + 20 random hex digits: sorts by creation time,
 * and 80 random bits make collisions out of reach.
 */
export function newId(prefix: string, now: number): string {
  return `${prefix}_${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}
