import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, ManualClock, type WebhookDisabledInfo, type Webhooks, type WebhooksOptions } from '../../src/index.js';
import { testKey } from './fixtures.js';
import { serveHandler, tempDir } from './http.js';

/**
 * The one test engine: a real SQLite file, a ManualClock (unless the test passes a clock), its
 * handler served over real HTTP so the issuer's `/.well-known/jwks` is reachable, a notifier that
 * records its calls, and a logger that records what was logged as errors.
 */
export async function makeEngine(overrides: Partial<WebhooksOptions> & { filename?: string } = {}) {
  const dir = tempDir();
  // Typed as ManualClock: only tests on the default clock advance it; others pass their own.
  const clock = (overrides.clock ?? new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'))) as ManualClock;
  const logged: string[] = [];
  let current: Webhooks | undefined;
  const site = await serveHandler((req) => current!.handler(req));
  const notified: WebhookDisabledInfo[] = [];
  const { filename: file, ...options } = overrides;
  const filename = file ?? dir.file('webhooks.db');
  const open = async (extra: Partial<WebhooksOptions> = {}) => {
    const hooks = createWebhooks({
      // Only when the test brings none: a store opened and then overridden would never be closed
      // (its checkpoint thread starting later on a file already removed).
      store: overrides.store ?? extra.store ?? sqliteStore({ filename }),
      keys: [await testKey()],
      issuer: site.url,
      clock,
      allowPrivateNetworks: true,
      notifier: { webhookDisabled: (info) => void notified.push(info) },
      logger: { warn: () => {}, error: (message, meta) => logged.push(`${message} ${JSON.stringify(meta ?? {})}`) },
      delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000 },
      ...options,
      ...extra,
    });
    current = hooks;
    return hooks;
  };
  const hooks = await open();
  const jwks = createRemoteJWKSet(new URL(`${site.url}/.well-known/jwks`));
  return {
    hooks,
    clock,
    dir,
    filename,
    issuer: site.url,
    notified,
    logged,
    /** Closes this engine and opens another on the same file (a process restart). */
    async restart(extra: Partial<WebhooksOptions> = {}) {
      await current!.close();
      return open(extra);
    },
    /** Verifies a delivered body as a receiver would: remote JWKS over HTTP, RS256, issuer. */
    async verify(token: string): Promise<{ payload: JWTPayload & Record<string, any>; header: Record<string, unknown> }> {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer: site.url,
        algorithms: ['RS256'],
        currentDate: new Date(clock.now()),
      });
      return { payload: payload as JWTPayload & Record<string, any>, header: protectedHeader as Record<string, unknown> };
    },
    async close() {
      await current?.close();
      await site.close();
      dir.cleanup();
    },
  };
}
