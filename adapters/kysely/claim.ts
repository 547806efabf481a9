import type { Kysely } from 'kysely';
import type { ClaimedDelivery } from '../../src/model.js';
import type { ClaimArgs, Claimed } from '../../src/store.js';
import { paceClaims } from './pace.js';
import { toDelivery, toEvent, toLease, toWebhook } from './rows.js';
import type { ClaimRow, DeliveryRow, EngineTables, EventRow, WebhookRow } from './schema.js';
import { list, precompiled, text } from './texts.js';

type Db = Kysely<EngineTables>;

/** What a claim asks of the dialect: its claim statement (SQLite's, or PostgreSQL's function). */
interface ClaimDialect {
  name: 'sqlite' | 'postgres';
  claim(db: Db, args: ClaimArgs): Promise<ClaimRow[]>;
}

/** More claims at most, after one that sent deliveries of paced webhooks to their start times. */
const PACE_ROUNDS = 3;

/**
 * The claim (`Store.claimDue`): due deliveries under a lease, each with its webhook and event, in
 * one statement (and, on SQLite, one read of the webhooks and events after it); then the pace of
 * rate-limited webhooks applied to what it took (`pace.ts`).
 */
export async function claimDue(db: Db, dialect: ClaimDialect, args: ClaimArgs): Promise<Claimed> {
  // Endpoint options: deliveries of a paced webhook not yet at their start time go back, due
  // then (pace.ts); a claim that gave some back claims again for the room they left, a few
  // times at most (a backlog is spread over its start times a claim's worth at a time).
  let claimed = await claimOnce(db, dialect, args);
  for (let round = 0; round < PACE_ROUNDS && claimed.paced > 0 && claimed.length < args.limit; round++) {
    const more = await claimOnce(db, dialect, Object.assign({}, args, { limit: args.limit - claimed.length }));
    if (more.length === 0 && more.paced === 0) break;
    claimed = withPaced([...claimed, ...more], more.paced);
  }
  return claimed;
}

/** One claim statement, the deliveries of paced webhooks sent to their start times; `paced`: how many went. */
async function claimOnce(db: Db, dialect: ClaimDialect, args: ClaimArgs): Promise<Claimed & { paced: number }> {
  const all = await dialect.claim(db, args);
  // PostgreSQL's claim that took nothing answers with one row of nulls and the next due times.
  const rows = all.filter((r) => r.id != null);
  if (rows.length === 0) {
    const next = all[0];
    if (!next || !('next_delivery' in next)) return withPaced([], 0);
    // Not enumerable: the result still looks (and compares, and serializes) like the empty list it is.
    return Object.defineProperty(withPaced([], 0), 'nextDueAt', { value: earliest(next.next_delivery, next.next_notice) });
  }
  // PostgreSQL's claim brings them (on one row, wherever the sort put it); SQLite reads them.
  const fromClaim = 'webhooks' in rows[0]!;
  const carrier = fromClaim ? rows.find((r) => r.webhooks != null || r.events != null) : undefined;
  const { hooks, events } = fromClaim ? { hooks: carrier?.webhooks ?? [], events: carrier?.events ?? [] } : await readClaimed(db, rows);
  const hookById = new Map(hooks.map((h) => [h.id, toWebhook(h)]));
  const eventById = new Map(events.map((e) => [e.id, { event: toEvent(e), traceparent: e.traceparent ?? null }]));
  const claimed: ClaimedDelivery[] = [];
  for (const row of rows) {
    const webhook = hookById.get(row.webhook_id);
    const found = eventById.get(row.event_id);
    // A webhook deleted between claim and read took its deliveries with it: nothing to send.
    if (!webhook || !found) continue;
    const delivery = toDelivery(row);
    // The due time the claim found (`claimed_due_at`: see `leaseSet` in due.ts).
    const dueAt = row.claimed_due_at == null ? delivery.updatedAt : Number(row.claimed_due_at);
    claimed.push({ delivery, webhook, event: found.event, dueAt, traceparent: found.traceparent, lease: toLease(row) });
  }
  const states = new Map(hooks.map((h) => [h.id, h]));
  const admitted = await paceClaims(db, claimed, states, args, dialect.name);
  return withPaced(admitted === claimed ? claimed : [...admitted], claimed.length - admitted.length);
}

/** Not enumerable, like `nextDueAt`: a claim still looks like the list it is. */
function withPaced(list: ClaimedDelivery[], paced: number): ClaimedDelivery[] & { paced: number } {
  return Object.defineProperty(list, 'paced', { value: paced }) as ClaimedDelivery[] & { paced: number };
}

/** The earlier of a delivery's and a notice's next due time (bigints come back as strings), or null. */
export function earliest(...times: Array<number | string | null | undefined>): number | null {
  const known = times.filter((t) => t != null).map(Number);
  return known.length > 0 ? Math.min(...known) : null;
}

/**
 * The webhooks and events of claimed rows, read after the claim (two statements at once). A
 * function, not a `#private` method: a host may wrap the store (`Object.create(store)`, a Proxy),
 * and a private member is not found through the wrapper.
 */
async function readClaimed(db: Db, rows: readonly DeliveryRow[]): Promise<{ hooks: WebhookRow[]; events: EventRow[] }> {
  const webhookIds = [...new Set(rows.map((r) => r.webhook_id))];
  const eventIds = [...new Set(rows.map((r) => r.event_id))];
  const { run, texts } = precompiled(db);
  const byIds = (table: 'iw_webhooks' | 'iw_events', n: number) =>
    text(texts, `${table} ${n}`, (p) => `select * from "${table}" where "id" in (${list(n, p)})`);
  const [hooks, events] = await Promise.all([
    run<WebhookRow>(byIds('iw_webhooks', webhookIds.length), webhookIds),
    run<EventRow>(byIds('iw_events', eventIds.length), eventIds),
  ]);
  return { hooks, events };
}
