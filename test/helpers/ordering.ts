import type { ReceivedRequest } from './http.js';

/** The event id and the user of a delivered JWT (read, not verified: the delivery tests verify). */
export function decoded(req: ReceivedRequest): { eventId: string; subject: string } {
  const payload = JSON.parse(Buffer.from(req.body.split('.')[1]!, 'base64url').toString('utf8'));
  return { eventId: payload.event_id, subject: payload.data.user.id };
}

/**
 * What broke the order (ordered delivery per subject), per subject: an event whose first success
 * came before an earlier one's, or an attempt of an event made before the event before it had
 * succeeded. `statuses[i]` is what the receiver answered to `requests[i]`; `emitted` lists each
 * subject's event ids in emit order.
 */
export function orderViolations(
  requests: readonly ReceivedRequest[],
  statuses: readonly number[],
  emitted: ReadonlyMap<string, string[]>,
): string[] {
  const succeededAt = new Map<string, number>();
  const firstTry = new Map<string, number>();
  requests.forEach((req, i) => {
    const { eventId } = decoded(req);
    if (!firstTry.has(eventId)) firstTry.set(eventId, i);
    if (statuses[i] === 200 && !succeededAt.has(eventId)) succeededAt.set(eventId, i);
  });
  const out: string[] = [];
  for (const [subject, events] of emitted) {
    for (let k = 1; k < events.length; k++) {
      const before = succeededAt.get(events[k - 1]!);
      const tried = firstTry.get(events[k]!);
      if (before === undefined || tried === undefined || tried < before) {
        out.push(`${subject}#${k}`);
        break;
      }
    }
  }
  return out;
}
