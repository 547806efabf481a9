import pRetry from 'p-retry';
import { WebhooksError } from './errors.js';

/**
 * A transient retry: the same store call again, in-process, while the database is busy or
 * briefly gone (a restart, a failover, a busy SQLite file). Never used for deliveries, whose
 * back-off is durable.
 *
 * Errors the store classifies as transient (`Store.isTransient`) are retried for the whole
 * `budgetMs`; anything else (a bug, a constraint) at most 5 times, so it surfaces quickly. The
 * dispatcher gives an outcome write the rest of its lease as budget: giving up earlier would let
 * the lease lapse into a second send of a delivery that already happened.
 */
export function transient<T>(
  isTransient: (error: unknown) => boolean,
  fn: () => Promise<T>,
  budgetMs = 2_000,
  otherRetries = 5,
): Promise<T> {
  return pRetry(fn, {
    retries: 1_000,
    minTimeout: 20,
    maxTimeout: 1_000,
    factor: 2,
    maxRetryTime: Math.max(budgetMs, 100),
    // Our own refusals (a cap, a disabled webhook) are answers, never retried.
    shouldRetry: ({ error, attemptNumber }) => !(error instanceof WebhooksError) && (isTransient(error) || attemptNumber <= otherRetries),
  });
}
