import type { AttemptErrorKind } from '../model.js';

/**
 * Why a request got no HTTP answer: `timeout`, `network`, `dns`, or `blocked` (the guard
 * refused the address). Its message ends up in the attempt log the account holder can read, so it
 * names categories, never internal addresses or key material.
 */
export class TransportError extends Error {
  constructor(
    readonly code: AttemptErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}
