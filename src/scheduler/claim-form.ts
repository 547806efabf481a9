/**
 * Which form a claim that leaves something out takes (`ClaimArgs.byWebhook`; both give the same
 * answer). Along the due index it reads past the due rows of what it leaves out; per webhook it
 * costs a seek per webhook with pending work, due or not. Each form has its bad case (a busy
 * webhook's large due backlog along the due index; thousands of webhooks whose next attempts
 * are all in the future, per webhook: docs/decisions/020), and neither can be told from here in
 * advance. So:
 * - after such a claim came back full, others have due work near the head of the due index:
 *   along it (a busy engine's usual refill);
 * - after one came back short, the due index would read the whole backlog left out to find
 *   nothing: per webhook, unless that proved slow (over four times an ordinary claim, and over
 *   `SLOW_FLOOR_MS`), then the due index once; with both measured, the cheaper. Every 32nd short claim
 *   forgets the dearer one's cost, so it is tried again if the cheaper one grows slow.
 * Costs are wall-clock milliseconds of the store call: they pick a plan, never a behaviour.
 */
export class ClaimForm {
  #lastShort = true;
  #cost: { byWebhook?: number; dueIndex?: number } = {};
  /** Moving average of an ordinary claim's cost (leaving nothing out, or full). */
  #typical = 0;
  #shortClaims = 0;

  /** `byWebhook` for the next claim that leaves something out. */
  next(): boolean {
    if (!this.#lastShort) return false;
    const { byWebhook, dueIndex } = this.#cost;
    if (byWebhook !== undefined && dueIndex !== undefined) return byWebhook <= dueIndex;
    if (byWebhook !== undefined) return !this.#slow(byWebhook);
    if (dueIndex !== undefined) return this.#slow(dueIndex);
    return true;
  }

  /** A claim took `ms` and came back with `took` of `limit`; `byWebhook` is the form it had, when it left something out. */
  record(ms: number, took: number, limit: number, byWebhook: boolean | null): void {
    if (byWebhook === null || took >= limit) this.#typical = this.#typical === 0 ? ms : 0.9 * this.#typical + 0.1 * ms;
    if (byWebhook === null) return;
    this.#lastShort = took < limit;
    if (!this.#lastShort) return;
    this.#cost[byWebhook ? 'byWebhook' : 'dueIndex'] = ms;
    if (++this.#shortClaims % 32 === 0) {
      const { byWebhook: w, dueIndex: d } = this.#cost;
      if (w !== undefined && d !== undefined) delete this.#cost[w <= d ? 'dueIndex' : 'byWebhook'];
    }
  }

  #slow(ms: number): boolean {
    return ms > Math.max(SLOW_FLOOR_MS, 4 * this.#typical);
  }
}

/** Below this a claim is never called slow, however cheap an ordinary one is. */
const SLOW_FLOOR_MS = 2;
