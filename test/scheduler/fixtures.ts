import type { Dispatch } from '../../src/delivery/dispatch.js';
import type { ClaimedDelivery } from '../../src/model.js';
import type { Slots } from '../../src/scheduler/slots.js';

let n = 0;

/** A claimed delivery of `webhookId` in `environment`, as far as the scheduler's policies read it. */
export function dispatchOf(webhookId: string, environment: string, leaseUntil = 1_000_000, failingSince: number | null = null): Dispatch {
  const claimed = {
    delivery: { id: `msg_${++n}` },
    webhook: { id: webhookId, environment, failingSince },
    lease: { workerId: 'w', until: leaseUntil },
  } as unknown as ClaimedDelivery;
  return { claimed, startSigning: () => Promise.resolve('token') };
}

/** Earns each webhook its full bound (slow start: one more slot per success), leaving nothing in flight. */
export function prove(slots: Slots, ids: string[], environment = 'a'): void {
  for (const id of ids) {
    for (let before = -1; slots.boundOf(id) > before; ) {
      before = slots.boundOf(id);
      slots.take(id, environment);
      slots.end(id, environment, { success: true, charged: true }, { ms: 10 });
    }
  }
}
