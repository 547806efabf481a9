/** Most webhooks remembered as deferred by a Retry-After here; past it the oldest is forgotten (its stored pace still holds it). */
const DEFERRED_MAX = 1_000;

/**
 * What this process holds back for endpoints that asked to slow down (a Retry-After, a 429, a
 * 410) while that attempt's outcome is on its way to the store. Once the record has written the
 * pace, the store holds the webhook for every process. Decisions only: the loop gives back what
 * {@link takeWithdrawn} hands it.
 */
export class SlowDowns {
  /** Webhooks whose endpoint answered with a Retry-After, until when: left out of every claim here meanwhile. */
  readonly #deferred = new Map<string, number>();
  /** Claimed deliveries of such a webhook: given back once that attempt's outcome is recorded. */
  readonly #withdrawn = new Map<string, string[]>();

  /** Its endpoint asked for nothing before `until`. */
  defer(webhookId: string, until: number): void {
    this.#deferred.set(webhookId, Math.max(until, this.#deferred.get(webhookId) ?? 0));
    if (this.#deferred.size > DEFERRED_MAX) this.#deferred.delete(this.#deferred.keys().next().value!);
  }

  isDeferred(webhookId: string, now: number): boolean {
    return (this.#deferred.get(webhookId) ?? 0) > now;
  }

  /** The webhooks deferred at `now` (those whose time has passed are forgotten). */
  deferredAt(now: number): string[] {
    const ids: string[] = [];
    for (const [id, until] of this.#deferred)
      if (until <= now) this.#deferred.delete(id);
      else ids.push(id);
    return ids;
  }

  /** The outcome that paces this webhook is recorded: the store holds it from now on. */
  paced(webhookId: string): void {
    this.#deferred.delete(webhookId);
  }

  /** Deliveries of this webhook to give back once its attempt's outcome is recorded. */
  withdraw(webhookId: string, ids: readonly string[]): void {
    const list = this.#withdrawn.get(webhookId);
    if (list) list.push(...ids);
    else this.#withdrawn.set(webhookId, [...ids]);
  }

  /** What was withdrawn of this webhook, now to be given back (its attempt's outcome is recorded). */
  takeWithdrawn(webhookId: string): string[] {
    const ids = this.#withdrawn.get(webhookId) ?? [];
    this.#withdrawn.delete(webhookId);
    return ids;
  }

  /** Everything withdrawn (closing). */
  takeAllWithdrawn(): string[] {
    const ids = [...this.#withdrawn.values()].flat();
    this.#withdrawn.clear();
    return ids;
  }
}
