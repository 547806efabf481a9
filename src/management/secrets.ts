import { NotFoundError, ValidationError } from '../errors.js';
import type { WebhookRecord } from '../model.js';
import { requireSealer } from '../secrets/seal.js';
import { DEFAULT_GRACE_MS, MAX_GRACE_MS, resealed, rotated } from '../secrets/webhook-secrets.js';
import type { Management } from '../types.js';
import { type SealedWrites, signingOf } from './sealed.js';
import { environmentOf as env, type ManagementDeps } from './shared.js';

/** Webhooks re-sealed per page of `resealSecrets`. */
const RESEAL_BATCH = 200;

/** A webhook's signing secret: revealed, rotated with a grace, and every secret re-sealed under the current key. */
export function secretFunctions(
  { access, clock, sealer }: ManagementDeps,
  { changeSealed }: SealedWrites,
): Pick<Management['webhooks'], 'secret' | 'rotateSecret' | 'resealSecrets'> {
  /** The rotation under way per webhook, for the next to wait on. */
  const rotations = new Map<string, Promise<void>>();

  /** The signing secret in clear, for the explicit reveal only. */
  function revealed(stored: WebhookRecord) {
    const s = signingOf(stored);
    const opener = requireSealer(sealer, 'reading a signing secret');
    return { secret: opener.open(s.secret, stored.id), publicKey: s.publicKey, previousUntil: s.previousUntil };
  }

  return {
    async secret(id, options) {
      const environment = env(options);
      const stored = await access.find('webhook', id, 'reading a signing secret', (s) => s.getWebhook(environment, id));
      return revealed(stored);
    },
    async rotateSecret(id, options) {
      const environment = env(options);
      const graceMs = options?.graceMs ?? DEFAULT_GRACE_MS;
      if (typeof graceMs !== 'number' || !Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS)
        throw new ValidationError(`graceMs must be whole milliseconds from 0 to ${MAX_GRACE_MS} (7 days)`, { field: 'graceMs' });
      // One at a time per webhook in this process (the store's compare-and-set orders them
      // between processes): every secret handed out then signs until its own grace ends.
      const before = rotations.get(id) ?? Promise.resolve();
      const run = before.then(() =>
        changeSealed(environment, id, 'rotating a signing secret', (stored) => {
          const current = signingOf(stored);
          const sealing = requireSealer(sealer, 'rotating a signing secret');
          return { signing: rotated(sealing, id, current, clock.now(), graceMs) };
        }),
      );
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      rotations.set(id, settled);
      void settled.then(() => rotations.get(id) === settled && rotations.delete(id));
      return revealed(await run);
    },
    async resealSecrets() {
      const sealing = requireSealer(sealer, 'resealing secrets');
      let resealedCount = 0;
      let after: string | null = null;
      for (;;) {
        const page: WebhookRecord[] = await access.run('listing sealed secrets', (s) => s.listWebhooksWithSecrets(after, RESEAL_BATCH));
        for (const listed of page) {
          if (resealed(sealing, listed) === null) continue;
          let changed = false;
          await changeSealed(listed.environment, listed.id, 'resealing secrets', (webhook) => {
            const again = resealed(sealing, webhook);
            changed = again !== null;
            return again;
          }).catch((error: unknown) => {
            if (!(error instanceof NotFoundError)) throw error; // deleted since it was listed
          });
          if (changed) resealedCount++;
        }
        if (page.length < RESEAL_BATCH) break;
        after = page[page.length - 1]!.id;
      }
      return { resealed: resealedCount };
    },
  };
}
