/**
 * Which form a claim that leaves something out takes (`ClaimArgs.byWebhook`; both give the same
 * answer). Along the due index it reads past the due rows of what it leaves out; per webhook it
 * costs a seek per webhook with pending work, due or not. Each form has its bad case (a busy
 * webhook's large due backlog along the due index; thousands of webhooks whose next attempts
 * are all in the future, per webhook: docs/decisions/020), and neither can be told from here in
 * advance. So:
 * - after such a claim came back full, others have due work near the head of the due index:
 *   along it (a busy engine's usual refill), for a claim that leaves out no more than that one
 *   did; one that leaves out more (another webhook reached its bound since) may find nothing
 *   there, the case of a short claim below;
 * - after one came back short, the due index would read the whole backlog left out to find
 *   nothing: per webhook, unless that proved slow (over four times an ordinary claim, and over
 *   `SLOW_FLOOR_MS`), then the due index once; with both measured, the cheaper. Every 32nd short claim
 *   forgets the dearer one's cost, so it is tried again if the cheaper one grows slow.
 * Costs are wall-clock milliseconds of the store call: they pick a plan, never a behaviour.
 */
export class ClaimForm {
  #lastShort = true;
  /** What the last claim that came back full left out (webhook ids, and environments as `env:` keys). */
  #fullLeftOut: ReadonlySet<string> | undefined;
  #cost: { byWebhook?: number; dueIndex?: number } = {};
  /** Moving average of an ordinary claim's cost (leaving nothing out, or full). */
  #typical = 0;
  #shortClaims = 0;

  /** `byWebhook` for the next claim that leaves something out (`leftOut`: what, as {@link leftOutKeys} gives). */
  next(leftOut?: ReadonlySet<string>): boolean {
    if (!this.#lastShort && within(leftOut, this.#fullLeftOut)) return false;
    const { byWebhook, dueIndex } = this.#cost;
    if (byWebhook !== undefined && dueIndex !== undefined) return byWebhook <= dueIndex;
    if (byWebhook !== undefined) return !this.#slow(byWebhook);
    if (dueIndex !== undefined) return this.#slow(dueIndex);
    return true;
  }

  /** A claim took `ms` and came back with `took` of `limit`; `byWebhook` is the form it had, when it left something out. */
  record(ms: number, took: number, limit: number, byWebhook: boolean | null, leftOut?: ReadonlySet<string>): void {
    if (byWebhook === null || took >= limit) this.#typical = this.#typical === 0 ? ms : 0.9 * this.#typical + 0.1 * ms;
    if (byWebhook === null) return;
    this.#lastShort = took < limit;
    if (!this.#lastShort) {
      this.#fullLeftOut = leftOut;
      return;
    }
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

/** What a claim leaves out, as the keys {@link ClaimForm} compares. */
export function leftOutKeys(webhookIds: readonly string[], environments: readonly string[]): Set<string> {
  return new Set([...webhookIds, ...environments.map((e) => `env:${e}`)]);
}

/** Whether `a` leaves out nothing that `b` did not (unknown on either side: the same). */
function within(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  for (const key of a) if (!b.has(key)) return false;
  return true;
}

/** Below this a claim is never called slow, however cheap an ordinary one is. */
const SLOW_FLOOR_MS = 2;
