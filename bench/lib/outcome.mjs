import { randomUUID } from 'node:crypto';

/**
 * The store's record of a claimed delivery's successful attempt at `now` (3 ms, HTTP 200), by
 * worker 'bench', as the engine's recorder hands it to `Store.recordAttempts`.
 */
export function delivered(claimed, now = Date.now()) {
  return {
    attempt: {
      id: `attempt_${randomUUID()}`,
      deliveryId: claimed.delivery.id,
      webhookId: claimed.webhook.id,
      environment: claimed.delivery.environment,
      startedAt: now,
      durationMs: 3,
      statusCode: 200,
      errorKind: null,
      errorMessage: null,
      responseExcerpt: 'ok',
      success: true,
    },
    workerId: 'bench',
    now,
    nextAttemptAt: null,
    disableAfterMs: 72 * 3600_000,
  };
}
