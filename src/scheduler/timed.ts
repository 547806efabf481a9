import type { ClaimedDelivery } from '../model.js';

/**
 * Timed deliveries: claimed with a start time later in the same second (`ClaimedDelivery.startAt`,
 * a paced webhook's: adapters/kysely/pace.ts), waiting in this process until then, holding no
 * slot. Decisions only: the loop arms a timer for {@link earliest} and starts what {@link due}
 * hands it. A webhook with a claim's worth waiting is left out of the next claims, so what waits
 * here stays bounded.
 */
export class Timed {
  /** By webhook, in start order. */
  readonly #byWebhook = new Map<string, ClaimedDelivery[]>();
  #size = 0;

  constructor(private readonly options: { batchSize: number }) {}

  get size(): number {
    return this.#size;
  }

  /** Keeps `c` until its `startAt`. */
  add(c: ClaimedDelivery): void {
    const id = c.webhook.id;
    const list = this.#byWebhook.get(id) ?? [];
    list.push(c);
    if (list.length > 1 && startOf(list.at(-2)!) > startOf(c)) list.sort((a, b) => startOf(a) - startOf(b));
    this.#byWebhook.set(id, list);
    this.#size++;
  }

  /** The earliest start time waiting, if any. */
  earliest(): number | undefined {
    let at: number | undefined;
    for (const list of this.#byWebhook.values()) if (at === undefined || startOf(list[0]!) < at) at = startOf(list[0]!);
    return at;
  }

  /** Takes what starts at `now` or before, in start order. */
  due(now: number): ClaimedDelivery[] {
    const out: ClaimedDelivery[] = [];
    for (const [id, list] of this.#byWebhook) {
      let n = 0;
      while (n < list.length && startOf(list[n]!) <= now) n++;
      if (n === 0) continue;
      out.push(...list.splice(0, n));
      if (list.length === 0) this.#byWebhook.delete(id);
    }
    this.#size -= out.length;
    return out.sort((a, b) => startOf(a) - startOf(b));
  }

  /** Takes every one of `webhookId` (its endpoint asked to slow down: they go back to be paced again). */
  take(webhookId: string): ClaimedDelivery[] {
    const list = this.#byWebhook.get(webhookId) ?? [];
    this.#byWebhook.delete(webhookId);
    this.#size -= list.length;
    return list;
  }

  /** Empties it (closing): what waited goes back. */
  takeAll(): ClaimedDelivery[] {
    const all = [...this.#byWebhook.values()].flat();
    this.#byWebhook.clear();
    this.#size = 0;
    return all;
  }

  /** The webhooks with a claim's worth waiting here: the next claims leave them out. */
  fullWebhooks(): string[] {
    const out: string[] = [];
    for (const [id, list] of this.#byWebhook) if (list.length >= this.options.batchSize) out.push(id);
    return out;
  }

  environmentOf(webhookId: string): string | undefined {
    return this.#byWebhook.get(webhookId)?.[0]?.webhook.environment;
  }
}

const startOf = (c: ClaimedDelivery) => c.startAt ?? c.dueAt;
