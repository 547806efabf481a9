/**
 * What a webhook's attempt adds for its format and auth: the Standard Webhooks
 * signature headers, the bearer token of OAuth2 client credentials, the client certificate of
 * mTLS. The secrets are opened from their sealed text once and kept in memory by that text, so a
 * rotation or a change is a new entry; nothing opened is logged or stored.
 */
import type { Clock } from '../clock.js';
import type { WebhookRecord } from '../model.js';
import { requireSealer, type Sealer } from '../secrets/seal.js';
import { inGrace } from '../secrets/webhook-secrets.js';
import { ed25519PrivateKey, type StandardKeys, secretKey, signatureHeader } from '../signing/standard-webhooks.js';
import type { Guard } from './guard/guard.js';
import { TokenCache } from './oauth2.js';
import type { ClientCertificate, Transport } from './transport.js';

/** What an attempt to this webhook needs beyond the JWT default (see `attempt.ts`). */
export interface EndpointAccess {
  contentType: string;
  /** The headers of one try (signature, authorization); `refused`: the last try got a 401, fetch a new token. */
  headers(deliveryId: string, body: string, refused: boolean): Record<string, string> | Promise<Record<string, string>>;
  /** A 401 is worth one more try with a new token. */
  refreshes: boolean;
  clientCertificate?: ClientCertificate;
}

/** Opened secrets kept at most this many (webhooks); past it the oldest go. */
const OPENED_MAX = 10_000;

export class EndpointKeys {
  readonly #opened = new Map<string, unknown>();
  readonly #tokens: TokenCache;

  constructor(private readonly deps: { sealer: Sealer | null; clock: Clock; transport: Transport; guard: Guard; timeoutMs: number }) {
    this.#tokens = new TokenCache(deps);
  }

  /** What `webhook`'s attempts add, or undefined for a JWT webhook without auth (the default path). */
  access(webhook: WebhookRecord): EndpointAccess | undefined {
    const standard = webhook.format === 'standard-webhooks' && webhook.signing ? webhook : null;
    const auth = webhook.auth ?? null;
    if (standard === null && auth === null) return undefined;
    const sign = standard ? (id: string, body: string) => this.#signature(standard, id, body) : null;
    const oauth = auth?.type === 'oauth2_client_credentials' ? auth : null;
    const access: EndpointAccess = {
      contentType: standard ? 'application/json' : 'application/jwt',
      refreshes: oauth !== null,
      headers: (id, body, refused) => {
        const headers: Record<string, string> = sign ? sign(id, body) : {};
        if (oauth === null) return headers;
        const key = webhook.id;
        const open = () => ({
          tokenUrl: oauth.tokenUrl,
          clientId: oauth.clientId,
          clientSecret: this.#open(oauth.clientSecret, webhook.id, (t) => t),
          scope: oauth.scope ?? null,
          audience: oauth.audience ?? null,
        });
        const stale = refused ? this.#tokens.current(key) : undefined;
        return this.#tokens.token(key, oauth.clientSecret, open, stale).then((token) => {
          headers.authorization = `Bearer ${token}`;
          return headers;
        });
      },
    };
    if (auth?.type === 'mtls') {
      access.clientCertificate = {
        pool: webhook.id,
        // The pool is made again when any of them changes (a new certificate or CA with the same key).
        version: `${auth.privateKey}\n${auth.certificate}\n${auth.ca ?? ''}`,
        cert: auth.certificate,
        key: this.#open(auth.privateKey, webhook.id, (t) => t),
        ca: auth.ca ?? null,
      };
    }
    return access;
  }

  /** `webhook-id`, `webhook-timestamp` (this attempt, Unix seconds) and `webhook-signature`. */
  #signature(webhook: WebhookRecord, id: string, body: string): Record<string, string> {
    const now = this.deps.clock.now();
    const timestamp = Math.floor(now / 1000);
    return { 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(this.#keys(webhook, now), id, timestamp, body) };
  }

  #keys(webhook: WebhookRecord, now: number): StandardKeys {
    const s = webhook.signing!;
    const hmac = [this.#open(s.secret, webhook.id, secretKey)];
    // During a rotation's grace the secrets before it sign too: a receiver holding any verifies.
    for (const r of inGrace(s, now)) hmac.push(this.#open(r.secret, webhook.id, secretKey));
    const ed25519 = s.privateKey === null ? null : this.#open(s.privateKey, webhook.id, ed25519PrivateKey);
    return { hmac, ed25519 };
  }

  /** Opens a sealed text once (then from memory, by its text), turned into what `as` makes of it. */
  #open<T>(sealed: string, rowId: string, as: (plaintext: string) => T): T {
    const had = this.#opened.get(sealed);
    if (had !== undefined) return had as T;
    const sealer = requireSealer(this.deps.sealer, 'a webhook with a signing secret or endpoint auth');
    const value = as(sealer.open(sealed, rowId));
    if (this.#opened.size >= OPENED_MAX) this.#opened.delete(this.#opened.keys().next().value as string);
    this.#opened.set(sealed, value);
    return value;
  }
}
