import { createDashboard } from './dashboard/handler.js';
import { DashboardLinks } from './dashboard-links.js';
import { Dispatcher } from './delivery/dispatch.js';
import { httpTransport } from './delivery/transport.js';
import { createEmit } from './emit.js';
import { WebhooksError } from './errors.js';
import { HourPacking } from './hour-packs.js';
import { allowedOriginSet } from './http/cross-site.js';
import { createHandler } from './http/handler.js';
import { createManagement } from './management/index.js';
import { listNotices } from './notices/list.js';
import { NoticeOutbox } from './notices/outbox.js';
import { snapshotOptions } from './options.js';
import { Retention } from './retention.js';
import { type Chore, Scheduler } from './scheduler/scheduler.js';
import { sealedTexts } from './secrets/webhook-secrets.js';
import { StoreAccess } from './store-access.js';
import { logFields } from './telemetry/log-fields.js';
import { Telemetry } from './telemetry/telemetry.js';
import type { Webhooks, WebhooksOptions } from './types.js';

/** How many webhooks holding secrets start() opens with secretsKey (the first page: a wrong key shows at once). */
const SECRETS_CHECKED = 100;

/**
 * Creates the webhook engine: wires its parts, nothing else. Each stage has its own home:
 * `emit.ts` (validate, store, wake), `management/` (the in-process management functions),
 * `scheduler/` (time and slots), `delivery/dispatch.ts` (one delivery from claim to outcome),
 * `http/` (the web handler, over the management functions).
 *
 * @example
 * ```ts
 * const hooks = createWebhooks({
 *   store: sqliteStore({ filename: 'webhooks.db' }),
 *   keys: [await generateSigningKey()],
 *   issuer: 'https://auth.example.com',
 *   notifier: { webhookDisabled: (info) => mailer.send(info.environment, info.webhook) },
 * });
 * await hooks.start();
 * await hooks.webhooks.create({ name: 'CRM', endpoint: 'https://crm.example.com/hooks', eventTypes: ['user.created'] });
 * await hooks.emit({ type: 'user.created', source: 'admin', data: { user } });
 * ```
 */
export function createWebhooks<Tx = unknown>(options: WebhooksOptions<Tx>): Webhooks<Tx> {
  const o = snapshotOptions(options);
  const { store, clock, keys, logger } = o;
  const onError = (message: string, error: unknown) => logger.error(message, logFields(error));
  const ownTransport = options.transport === undefined;
  // As many connections per origin as attempts may be in flight: environments whose endpoints share
  // a server never queue behind another's hanging path for a connection (the slots bound the rest).
  const transport = options.transport ?? httpTransport({ connectionsPerOrigin: o.delivery.concurrency });
  const access = new StoreAccess(store, clock);
  const telemetry = new Telemetry(options.telemetry, { store, clock });

  const outbox = new NoticeOutbox({
    store,
    clock,
    notifier: o.notifier,
    logger,
    telemetry,
    workerId: o.delivery.workerId,
    pollIntervalMs: o.delivery.pollIntervalMs,
  });
  // The packs of settled hours, for the list's read (src/hour-packs.ts, decision 040).
  const chores: Chore[] = [outbox, new HourPacking({ store, clock })];
  if (o.retentionMs !== null) chores.push(new Retention({ store, clock, logger, periodMs: o.retentionMs }));
  const dispatcher = new Dispatcher({
    store,
    clock,
    keys,
    issuer: o.issuer,
    transport,
    guard: o.guard,
    backoff: o.backoff,
    onNotice: () => outbox.poke(),
    logger,
    telemetry,
    workerId: o.delivery.workerId,
    timeoutMs: o.delivery.timeoutMs,
    leaseMs: o.delivery.leaseMs,
    disableAfterMs: o.disableAfterMs,
    sealer: o.sealer,
    disableOnGone: o.disableOnGone,
  });
  const scheduler = new Scheduler({
    store,
    clock,
    options: o.delivery,
    dispatcher,
    onError,
    chores,
  });
  // The loop runs in no caller's context (a host request that emitted must not own its spans).
  const wake = () => telemetry.detached(() => scheduler.wake());

  const { emit, emitTo } = createEmit({ access, clock, catalog: o.catalog, maxPayloadBytes: o.maxPayloadBytes, wake, telemetry });
  const management = createManagement({
    access,
    clock,
    catalog: o.catalog,
    guard: o.guard,
    issuer: o.issuer,
    maxWebhooks: o.maxWebhooks,
    wake,
    emitTo,
    sealer: o.sealer,
    disableAfterMs: o.disableAfterMs,
  });
  const jwks = () => keys.jwks();
  const dashboardOptions = options.dashboard;
  // The management API refuses another site's writes too (an authorize that reads a cookie).
  const allowedOrigins = allowedOriginSet(dashboardOptions?.allowedOrigins);
  const handler = createHandler({ management, jwks, authorize: options.authorize, onError, allowedOrigins });
  const links = new DashboardLinks({ access, clock, url: dashboardOptions?.url, sessionTtlMs: dashboardOptions?.sessionTtlMs });
  // Requests under a link's session: the same routes, answered for the session's environment.
  const sessions = new WeakMap<Request, { environment: string }>();
  const sessionHandler = createHandler({
    management,
    jwks,
    authorize: (request) => sessions.get(request) ?? null,
    onError,
    allowedOrigins,
  });
  const dashboard = createDashboard({
    api: (request, session) => {
      if (!session) return handler(request);
      sessions.set(request, session);
      return sessionHandler(request);
    },
    authorize: options.authorize,
    onError,
    allowedOrigins: dashboardOptions?.allowedOrigins,
    links,
    secureCookies: dashboardOptions?.url?.startsWith('https:') ?? false,
    theme: dashboardOptions?.theme,
    locale: dashboardOptions?.locale,
  });

  /**
   * The secrets stored (a first page of webhooks holding any) open under `secretsKey`: a wrong or
   * missing key fails start() with ERR_SECRETS_KEY_REQUIRED, not every delivery of those webhooks.
   */
  async function checkSecretsKey(): Promise<void> {
    const page = await access.run('checking secretsKey', (s) => s.listWebhooksWithSecrets(null, SECRETS_CHECKED));
    const held = page.flatMap((w) => sealedTexts(w).map((text) => [text, w.id] as const));
    if (held.length === 0) return;
    if (!o.sealer)
      throw new WebhooksError(
        'ERR_SECRETS_KEY_REQUIRED',
        'webhooks hold sealed secrets and no secretsKey was given: give the key they were sealed with',
      );
    // One row under a key since dropped fails that webhook's deliveries, not the engine: start()
    // fails only when the key opens nothing stored (the wrong key altogether).
    const failing = new Set<string>();
    let opened = 0;
    for (const [text, id] of held) {
      try {
        o.sealer.open(text, id);
        opened++;
      } catch {
        failing.add(id);
      }
    }
    if (opened === 0)
      throw new WebhooksError(
        'ERR_SECRETS_KEY_REQUIRED',
        'secretsKey opens none of the secrets stored: give the key they were sealed with',
      );
    if (failing.size > 0)
      logger.error('some stored secrets do not open under secretsKey: those webhooks fail their deliveries until the key is listed again', {
        errorKind: 'ERR_SECRETS_KEY_REQUIRED',
        webhookId: [...failing].slice(0, 20).join(','),
      });
  }

  let closed = false;
  const hooks: Webhooks<Tx> = {
    ...management,
    jwks,
    handler,
    dashboard,
    dashboardLink: (linkOptions) => links.mint(linkOptions),
    emit,
    async start() {
      if (!options.authorize) {
        logger.warn(
          "no authorize hook was given: every management API route answers 403 until createWebhooks({ authorize }) returns the caller's environment",
          { errorKind: 'ERR_NO_AUTHORIZE' },
        );
      }
      await access.ready();
      await keys.signingKey(); // a key that cannot sign fails start(), not every delivery
      await checkSecretsKey(); // nor a secretsKey that does not open what is stored
      telemetry.detached(() => scheduler.start());
    },
    keys: { rotate: (newKey, rotateOptions) => keys.rotate(newKey, rotateOptions), list: () => keys.list() },
    notices: { list: (filter) => listNotices(access, filter) },
    wake,
    drain: () => scheduler.drain(),
    async close() {
      if (closed) return;
      closed = true;
      access.close();
      // Last in, first out: stop the loop, let attempts in flight record, then release I/O, the
      // store first: closing the transport waits for idle keep-alive sockets, which undici does
      // not keep referenced, so a process with nothing else to do could end before a store
      // closed after them.
      await scheduler.close();
      telemetry.close();
      await store.close();
      if (ownTransport) await transport.close?.();
    },
    [Symbol.asyncDispose]() {
      return hooks.close();
    },
  };
  return hooks;
}
