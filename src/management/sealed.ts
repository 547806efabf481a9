import { mergeHeaders, needsSeal } from '../endpoint-options.js';
import { ValidationError, WebhooksError } from '../errors.js';
import type { WebhookRecord } from '../model.js';
import type { CleanSigningInput } from '../secrets/auth-input.js';
import { requireSealer } from '../secrets/seal.js';
import { newSigning, sealAuth, withAsymmetric } from '../secrets/webhook-secrets.js';
import type { WebhookPatch } from '../store.js';
import type { ManagementDeps } from './shared.js';

/** Rounds of read-change-write before a sealed change gives up (writers are people and a re-seal). */
const CHANGE_ROUNDS = 10;

/** The writes of a webhook's sealed columns (signing, auth, credential headers), shared by updates and secret operations. */
export type SealedWrites = ReturnType<typeof sealedWrites>;

export function sealedWrites({ access, clock, sealer }: ManagementDeps) {
  /** Headers to store for webhook `id`: credential values sealed (refused without secretsKey), masked ones kept. */
  function sealHeaders(id: string, given: Record<string, string>, stored: Record<string, string>) {
    const sealing = needsSeal(given) ? requireSealer(sealer, 'a credential header', 'headers') : null;
    return mergeHeaders(given, stored, (plaintext) => sealing!.seal(plaintext, id));
  }

  /** The secrets a webhook gets for `signing` (sealed): its signing keys, its auth. Refused without a sealer. */
  function secretsFor(stored: WebhookRecord, signing: CleanSigningInput): Partial<WebhookRecord> {
    const out: Partial<WebhookRecord> = {};
    const format = signing.format ?? stored.format ?? 'jwt';
    if (signing.format !== undefined) out.format = signing.format;
    if (signing.asymmetric && format !== 'standard-webhooks')
      throw new ValidationError('asymmetric signing (v1a) needs format standard-webhooks', { field: 'asymmetric' });
    if (format === 'standard-webhooks') {
      const sealing = requireSealer(sealer, 'a webhook in the standard-webhooks format', 'format');
      const had = stored.signing ?? null;
      if (had === null) out.signing = newSigning(sealing, stored.id, signing.asymmetric ?? false);
      else if (signing.asymmetric !== undefined) out.signing = withAsymmetric(sealing, stored.id, had, signing.asymmetric);
    }
    if (signing.auth === null) out.auth = null;
    else if (signing.auth !== undefined) {
      const sealing = requireSealer(sealer, `endpoint auth (${signing.auth.type})`, 'auth');
      out.auth = sealAuth(sealing, stored.id, signing.auth, stored.auth);
    }
    return out;
  }

  /**
   * Read, change, write a webhook's sealed columns (signing, auth, credential headers), the write
   * applied only while they are still as read, else read again: two rotations, a rotation and a
   * re-seal, or an update keeping masked values never lose one another's secret. `change` answers
   * the patch, or null for nothing to write. NotFoundError when the webhook is not there.
   */
  async function changeSealed(
    environment: string,
    id: string,
    what: string,
    change: (stored: WebhookRecord) => WebhookPatch | null,
  ): Promise<WebhookRecord> {
    for (let round = 1; ; round++) {
      const stored = await access.find('webhook', id, what, (s) => s.getWebhook(environment, id));
      const patch = change(stored);
      if (patch === null) return stored;
      const expect = { signing: stored.signing ?? null, auth: stored.auth ?? null, headers: stored.headers ?? {} };
      const done = await access.run(what, (s) => s.updateWebhook(environment, id, { ...patch, expect }, clock.now()));
      if (done) return done;
      // Changed since it was read (or deleted: the next read says so). A few rounds settle it;
      // past them something is wrong, and it is said.
      if (round === CHANGE_ROUNDS)
        throw new WebhooksError('ERR_STORE', `${what}: webhook ${JSON.stringify(id)} kept changing while it was written`);
    }
  }

  return { sealHeaders, secretsFor, changeSealed };
}

/** A webhook's signing secrets; refused for a webhook that signs JWTs (it has none). */
export function signingOf(webhook: WebhookRecord) {
  if (webhook.format !== 'standard-webhooks' || !webhook.signing)
    throw new ValidationError(`webhook ${JSON.stringify(webhook.id)} signs JWTs (format jwt): it has no signing secret`, {
      field: 'format',
    });
  return webhook.signing;
}
