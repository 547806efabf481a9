/**
 * `identity-webhooks/better-auth`: webhooks for a better-auth server, as one plugin. See
 * docs/better-auth.md.
 *
 * @example
 * ```ts
 * import { betterAuth } from 'better-auth';
 * import { webhooks, webhooksOf } from 'identity-webhooks/better-auth';
 *
 * const auth = betterAuth({
 *   database: new Database('auth.db'),
 *   baseURL: 'https://auth.example.com',
 *   emailAndPassword: { enabled: true },
 *   plugins: [webhooks({ keys: [signingKey], manage: ({ user }) => (user.role === 'admin' ? 'default' : null) })],
 * });
 * const hooks = await webhooksOf(auth); // the engine: emit your own events, close() on shutdown
 * ```
 */
import { tryGetCurrentAuthEndpointContext } from '@better-auth/core/context';
import type { AuthContext, BetterAuthPlugin } from 'better-auth';
import { createAuthMiddleware, isAPIError } from 'better-auth/api';
import { getAdapter } from 'better-auth/db/adapter';
import type { KyselyStore } from '../../adapters/kysely/store.js';
import { createWebhooks, type Logger, type Webhooks, type WebhooksOptions } from '../index.js';
import { refuseOptionsUnknown, WEBHOOKS_OPTIONS } from '../options.js';
import { refuseUnknown } from '../unknown-options.js';
import { type WatchedAdapter, watchAdapter } from './adapter.js';
import { sharedStore, transactionTracker } from './database.js';
import { AUTH_EVENT_TYPES, type Cause, createEmitter, type EnvironmentOf, type EventOverrides, watched } from './events.js';
import type { AuthUser } from './mapping.js';
import { type OrmOption, ormBinding } from './orm.js';
import { createServing, type Manage, type ServedContext } from './serve.js';

export type { WebhookEventMap } from '../receiver/event-types.generated.js';
export type { AuthEventType, EnvironmentOf, EventOverrides, MappingInput } from './events.js';
export type { AuthMember, AuthOrganization, AuthUser } from './mapping.js';
export type { OrmOption } from './orm.js';
export type { Manage } from './serve.js';

export interface BetterAuthWebhooksOptions extends Omit<WebhooksOptions, 'store' | 'issuer' | 'authorize'> {
  /** The environment each event belongs to. Default: `'default'` for everything. */
  environment?: EnvironmentOf;
  /**
   * Who may use the management API and the dashboard: given the signed-in user and session,
   * the environment they manage, or null (403). No session is always 403. Default: no one.
   */
  manage?: Manage;
  /** Per event type: `false` to emit none, or a function returning the `data` to send instead. */
  events?: EventOverrides;
  /** Where under better-auth's basePath the engine is served. Default `/webhooks`. */
  path?: string;
  /** `iss` of the tokens. Default: better-auth's base URL and basePath, then `path` (the JWKS is served there). */
  issuer?: string;
  /**
   * When better-auth's `database` is `drizzleAdapter(db, …)` or `prismaAdapter(prisma, …)`: that
   * `db` or `prisma` as `client`, and for Prisma the engine's connection as `database`. See
   * docs/better-auth.md, "Drizzle and Prisma".
   */
  orm?: OrmOption;
}

/** What webhooks() takes: createWebhooks' options but those the plugin sets, and its own. */
const PLUGIN_OPTIONS = [
  ...WEBHOOKS_OPTIONS.filter((o) => o !== 'store' && o !== 'issuer' && o !== 'authorize'),
  'environment',
  'manage',
  'events',
  'path',
  'issuer',
  'orm',
];

/** The plugin's id, as better-auth knows it. */
export const PLUGIN_ID = 'identity-webhooks';

const SIGN_IN_PATHS = new Set(['/sign-in/email', '/sign-in/username', '/sign-in/phone-number']);

/**
 * The better-auth plugin: keeps the engine's tables in better-auth's own database, emits the
 * user and organization events of better-auth's writes in the same transactions, and serves the
 * JWKS, the management API and the dashboard under `{basePath}/webhooks`.
 */
export function webhooks(options: BetterAuthWebhooksOptions) {
  if (typeof options !== 'object' || options === null) throw new TypeError('webhooks(): options are required');
  refuseOptionsUnknown(options, 'webhooks()', PLUGIN_OPTIONS);
  const { environment = () => 'default', manage = () => null, events = {}, path = '/webhooks', issuer, orm, ...engineOptions } = options;
  if (typeof environment !== 'function') throw new TypeError('webhooks(): environment must be a function');
  if (typeof manage !== 'function') throw new TypeError('webhooks(): manage must be a function');
  if (!/^(\/[\w.-]+)+$/.test(path)) throw new TypeError('webhooks(): path must look like /webhooks');
  refuseUnknown('webhooks()', events, AUTH_EVENT_TYPES, 'events.');
  if (orm !== undefined) {
    if (typeof orm !== 'object' || orm === null) throw new TypeError('webhooks(): orm must be { client, database? }');
    refuseUnknown('webhooks()', orm, ['client', 'database'], 'orm.');
  }
  for (const [type, override] of Object.entries(events)) {
    if (override !== false && typeof override !== 'function')
      throw new TypeError(`webhooks(): events['${type}'] must be false or a function`);
  }

  const serving = createServing(path, manage);
  let engine: Webhooks | undefined;
  let emitter: ReturnType<typeof createEmitter> | undefined;

  return {
    id: PLUGIN_ID,
    async init(ctx) {
      const logger: Logger = engineOptions.logger ?? {
        warn: (message, meta) => ctx.logger.warn(`[identity-webhooks] ${message}`, ...(meta === undefined ? [] : [meta])),
        error: (message, meta) => ctx.logger.error(`[identity-webhooks] ${message}`, ...(meta === undefined ? [] : [meta])),
      };
      // The store's warnings come with no error when there is none (the handle is not in WAL mode).
      const warn = (message: string, error: unknown) =>
        logger.warn(message, error === undefined ? undefined : { error: error instanceof Error ? error.message : String(error) });
      const baseURL = ctx.baseURL.replace(/\/+$/, '');
      if (!issuer && !baseURL) {
        throw new TypeError(
          'identity-webhooks/better-auth: set baseURL in betterAuth({ baseURL }) (or issuer in webhooks({ issuer })): it is where receivers fetch the keys',
        );
      }
      const database = ctx.options.database;
      let store: KyselyStore;
      let current: () => unknown;
      let afterCommit: (() => ((job: () => Promise<void>) => void) | undefined) | undefined;
      let adapter: WatchedAdapter;
      if (typeof database === 'function') {
        // An ORM's adapter (drizzleAdapter, prismaAdapter): better-auth keeps it, the engine
        // joins its transactions where it can (orm.ts).
        if (orm === undefined) {
          throw new TypeError(
            'identity-webhooks/better-auth: better-auth runs on an ORM adapter: pass the ORM client as webhooks({ orm: { client } }) (docs/better-auth.md, "Drizzle and Prisma")',
          );
        }
        const binding = ormBinding(orm, warn);
        ({ store, current, afterCommit } = binding);
        adapter = (await getAdapter(ctx.options as Parameters<typeof getAdapter>[0])) as unknown as WatchedAdapter;
      } else {
        if (orm !== undefined)
          throw new TypeError('webhooks(): orm is for a better-auth whose database is drizzleAdapter(…) or prismaAdapter(…)');
        const shared = sharedStore(database, warn);
        store = shared.store;
        // better-auth runs on the store's own Kysely: one connection discipline on SQLite, one
        // pool on PostgreSQL, and transactions the plugin can see and emit in.
        const tracker = transactionTracker(store.kysely);
        current = tracker.current;
        adapter = (await getAdapter({
          ...ctx.options,
          database: { db: tracker.kysely, type: shared.dialect, transaction: true },
        } as Parameters<typeof getAdapter>[0])) as unknown as WatchedAdapter;
      }

      // The plugin serves the dashboard, so it knows where: links work with no option of the
      // host's. Behind a proxy that terminates TLS the request says http://, the browser's Origin
      // https://: baseURL's origin may write, unless the host lists the origins itself.
      const dashboard = { ...engineOptions.dashboard };
      if (baseURL) {
        dashboard.url ??= `${baseURL}${path}/dashboard`;
        dashboard.allowedOrigins ??= [new URL(baseURL).origin];
      }
      engine = createWebhooks({
        ...engineOptions,
        logger,
        store,
        issuer: issuer ?? `${baseURL}${path}`,
        authorize: serving.authorize,
        dashboard,
      });
      await engine.start();
      const emitting = createEmitter({
        hooks: engine,
        environment,
        overrides: events,
        organizations: ctx.hasPlugin('organization'),
        logger,
        ...(engineOptions.telemetry?.meterProvider ? { meterProvider: engineOptions.telemetry.meterProvider } : {}),
        currentTransaction: current,
        ...(afterCommit ? { afterCommit } : {}),
        cause: currentCause,
      });
      emitter = emitting;
      watchAdapter(adapter, {
        watches: watched,
        onWrite: (write) => emitting.onWrite(write),
      });
      const hooks = engine;
      // The host's own emits from inside a better-auth write (its databaseHooks, say) join that
      // write's transaction when they name none: on a shared SQLite handle an emit of its own
      // would wait for the connection the transaction holds, which waits for the emit.
      const emit = hooks.emit.bind(hooks);
      hooks.emit = (event, emitOptions = {}) => {
        const joined = emitOptions.transaction === undefined ? current() : undefined;
        return emit(event, joined === undefined ? emitOptions : { transaction: joined });
      };
      const close = hooks.close.bind(hooks);
      hooks.close = async () => {
        emitting.close();
        await close();
      };
      hooks[Symbol.asyncDispose] = () => hooks.close();
      serving.remember(ctx as unknown as ServedContext);
      return { context: { adapter: adapter as unknown as AuthContext['adapter'], webhooks: hooks } };
    },
    onRequest: (request, ctx) => serving.onRequest(request, ctx as unknown as ServedContext, engine),
    hooks: {
      after: [
        {
          matcher: (context) => SIGN_IN_PATHS.has(context.path ?? ''),
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            if (!emitter || !isAPIError(returned) || (returned.statusCode !== 401 && returned.statusCode !== 403)) return;
            const body = (ctx.body ?? {}) as Record<string, unknown>;
            const email = typeof body.email === 'string' ? body.email.toLowerCase() : undefined;
            const found = email ? await ctx.context.internalAdapter.findUserByEmail(email).catch(() => null) : null;
            const cause: Cause = { path: ctx.path, fromRequest: ctx.request !== undefined, sessionUser: null };
            const reason = typeof returned.body?.code === 'string' ? returned.body.code : returned.message;
            await emitter.signInRefused(cause, (found?.user as AuthUser | undefined) ?? null, email ?? body.username ?? null, reason);
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

/** The request (or server call) better-auth is serving now, from its endpoint context. */
function currentCause(): Cause {
  const context = tryGetCurrentAuthEndpointContext() as
    | { path?: string; request?: Request; context?: { session?: { user?: AuthUser } | null } }
    | undefined;
  return {
    path: context?.path,
    fromRequest: context?.request !== undefined,
    sessionUser: context?.context?.session?.user ?? null,
  };
}

/**
 * The engine the plugin created for `auth` (started, migrated): for your own `emit`s (pass
 * `{ transaction }` when you emit inside a transaction of yours) and `close()` on shutdown.
 *
 * @example
 * ```ts
 * const hooks = await webhooksOf(auth);
 * process.on('SIGTERM', () => hooks.close());
 * ```
 */
export async function webhooksOf(auth: { $context: Promise<unknown> }): Promise<Webhooks> {
  const context = (await auth.$context) as { webhooks?: Webhooks };
  if (!context.webhooks) throw new TypeError('webhooksOf(): this better-auth instance has no webhooks() plugin');
  return context.webhooks;
}
