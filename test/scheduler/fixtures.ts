import type { Dispatch } from '../../src/delivery/dispatch.js';
import type { ClaimedDelivery } from '../../src/model.js';

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
