import pRetry from 'p-retry';
import { WebhooksError } from './errors.js';

/**
 * A transient retry: the same store call again, in-process, while the database is busy or
 * briefly gone (a restart, a failover, a busy SQLite file). Never used for deliveries, whose
 * back-off is durable.
 *
 * Errors the store classifies as transient (`Store.isTransient`) are tried again for the whole
 * `budgetMs`; anything else (a bug, a constraint) at most 5 times, so it surfaces quickly. The
 * dispatcher gives an outcome write the rest of its lease as budget: giving up earlier would let
 * the lease lapse into a second send of a delivery that already happened.
 */
export async function transient<T>(
  isTransient: (error: unknown) => boolean,
  fn: () => Promise<T>,
  budgetMs = 2_000,
  otherTries = 5,
): Promise<T> {
  // The first try runs bare: nearly every call succeeds at once, and p-retry's setup (its options
  // copied and checked on every call) cost many times the bare call on the hot path. A failure is
  // handed to p-retry as its first attempt, so what follows
  // (which errors are tried again, the delays, the attempt count) is p-retry's, as before; its clock
  // starts late by the first try, so the budget it gets is what that try left.
  const t0 = performance.now();
  try {
    return await fn();
  } catch (error) {
    let replayed = false;
    const maxRetryTime = Math.max(0, Math.max(budgetMs, 100) - (performance.now() - t0));
    return pRetry(
      () => {
        if (replayed) return fn();
        replayed = true;
        throw error;
      },
      {
        retries: 1_000,
        minTimeout: 20,
        maxTimeout: 1_000,
        factor: 2,
        maxRetryTime,
        // Our own refusals (a cap, a disabled webhook) are answers, never tried again.
        shouldRetry: ({ error, attemptNumber }) => !(error instanceof WebhooksError) && (isTransient(error) || attemptNumber <= otherTries),
      },
    );
  }
}
