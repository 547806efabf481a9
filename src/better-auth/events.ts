import { type MeterProvider, metrics } from '@opentelemetry/api';
import { WebhooksError } from '../errors.js';
import type { EventSource } from '../model.js';
import type { WebhookEventMap } from '../receiver/event-types.generated.js';
import type { EmitInput, Logger, Webhooks } from '../types.js';
import { VERSION } from '../version.js';
import type { Write, WriteKind } from './adapter.js';
import {
  type AuthInvitation,
  type AuthMember,
  type AuthOrganization,
  type AuthUser,
  authenticated,
  authenticationFailed,
  kindeInvitation,
  kindeMembership,
  kindeOrganization,
  kindeUser,
} from './mapping.js';

/** The event types the plugin emits. */
export type AuthEventType =
  | 'user.created'
  | 'user.updated'
  | 'user.deleted'
  | 'user.authenticated'
  | 'user.authentication_failed'
  | 'organization.created'
  | 'organization.updated'
  | 'organization.deleted'
  | 'membership.created'
  | 'membership.updated'
  | 'membership.deleted'
  | 'invitation.created'
  | 'invitation.accepted'
  | 'invitation.rejected'
  | 'invitation.canceled';

/** Every {@link AuthEventType}, for the plugin's check of its `events` overrides. */
export const AUTH_EVENT_TYPES: readonly AuthEventType[] = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.authenticated',
  'user.authentication_failed',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'membership.created',
  'membership.updated',
  'membership.deleted',
  'invitation.created',
  'invitation.accepted',
  'invitation.rejected',
  'invitation.canceled',
];

/** What a mapping override is given: the default `data`, and the rows it was built from. */
export interface MappingInput<K extends AuthEventType = AuthEventType> {
  type: K;
  /** The plugin's own `data` for this event (Kinde's shape, typed as the receiver's `WebhookEventMap` has it). */
  data: WebhookEventMap[K]['data'];
  source: EventSource;
  /** The user the event is about (user.*), or the signed-in user who acted (organization.*), when known. */
  user: AuthUser | null;
  organization?: AuthOrganization;
}

/**
 * Per event type: `false` to emit nothing of that type, or a function returning the `data` to
 * send instead (null: nothing this time). What it returns is validated like any emit; when it
 * fails validation the event is left out and logged, and the write still succeeds.
 */
export type EventOverrides = {
  [K in AuthEventType]?: false | ((input: MappingInput<K>) => Record<string, unknown> | null | undefined);
};

/** Who an event belongs to. */
export type EnvironmentOf = (subject: { user: AuthUser | null; organization?: AuthOrganization }) => string;

/** The request that caused a write, as better-auth's endpoint context tells it (none for a bare server call). */
export interface Cause {
  path: string | undefined;
  fromRequest: boolean;
  /** The signed-in user of the request, when better-auth resolved one. */
  sessionUser: AuthUser | null;
}

export interface EmitterDeps {
  hooks: Webhooks;
  environment: EnvironmentOf;
  overrides: EventOverrides;
  /** Whether the organization plugin is on (memberships are read into `organizations`). */
  organizations: boolean;
  logger: Logger;
  meterProvider?: MeterProvider;
  /** The transaction the current code runs in, for the engine to write in (see database.ts, orm.ts). */
  currentTransaction(): unknown;
  /**
   * When the current code runs in an ORM transaction the engine cannot join: where to put what
   * must happen once it commits (nothing happens if it rolls back). See orm.ts.
   */
  afterCommit?(): ((job: () => Promise<void>) => void) | undefined;
  cause(): Cause;
}

/**
 * The writes that become events: users, organizations and memberships, an invitation's creation
 * and its answer, and a session's creation (a sign-in).
 */
export function watched(model: string, kind: WriteKind): boolean {
  return (
    model === 'user' ||
    model === 'organization' ||
    model === 'member' ||
    (model === 'invitation' && kind !== 'delete') ||
    (model === 'session' && kind === 'create')
  );
}

/**
 * Sessions created on these paths are not sign-ins: a sign-up's own session (its event is
 * user.created), an admin impersonating, a password change that replaces the other sessions.
 */
const NOT_SIGN_IN = [/^\/sign-up\//, /^\/admin\/impersonate-user$/, /^\/change-password$/, /^\/reset-password/];

/** After-commit emits (a refused sign-in writes nothing to join) are tried again this long after a failure. */
const AGAIN_AFTER_MS = [1_000, 5_000, 30_000, 120_000];

/**
 * Turns better-auth's writes into events. Inside a write's transaction (`onWrite`) a failure of
 * the database fails the write too (that is what atomic means); a refusal by our validation (an
 * override's data) never does: it is logged and counted, and the write goes on.
 */
export function createEmitter(deps: EmitterDeps) {
  const meter = (deps.meterProvider ?? metrics.getMeterProvider()).getMeter('identity-webhooks/better-auth', VERSION);
  const failures = meter.createCounter('webhooks.better_auth.emit_failures', {
    description: 'Events of better-auth writes that could not be emitted (refused data, or a database failure after the write committed)',
  });
  let closed = false;

  const source = (cause: Cause): EventSource => (cause.path?.startsWith('/admin/') ? 'admin' : cause.fromRequest ? 'user' : 'api');

  /** The event a write becomes, or null when there is none (turned off, an override said none, or refused). */
  function prepare(type: AuthEventType, input: Omit<MappingInput, 'type' | 'data'> & { data: Record<string, unknown> }): EmitInput | null {
    // The map's key and its function's input agree by construction; TypeScript cannot follow that through `type`.
    const override = deps.overrides[type] as false | ((input: unknown) => Record<string, unknown> | null | undefined) | undefined;
    if (override === false) return null;
    try {
      // The host's code runs inside the write's transaction: a throw must not fail the write.
      const data = override ? override({ type, ...input }) : input.data;
      if (!data) return null;
      const environment = deps.environment({ user: input.user, ...(input.organization ? { organization: input.organization } : {}) });
      return { type, source: input.source, environment, data } as EmitInput;
    } catch (error) {
      refused(type, error);
      return null;
    }
  }

  /**
   * Emits a write's event in `transaction`; with none, in the one the ORM has open when the
   * engine cannot join it (Prisma on SQLite): then after that transaction commits.
   */
  async function emit(
    type: AuthEventType,
    input: Omit<MappingInput, 'type' | 'data'> & { data: Record<string, unknown> },
    transaction: unknown,
  ): Promise<void> {
    const event = prepare(type, input);
    if (!event) return;
    const later = transaction === undefined ? deps.afterCommit?.() : undefined;
    if (later) {
      later(() => detached(event));
      return;
    }
    try {
      await deps.hooks.emit(event, transaction === undefined ? {} : { transaction });
    } catch (error) {
      if (isRefusal(error)) refused(type, error);
      else throw error;
    }
  }

  /**
   * An event with no transaction to join (a refused sign-in writes nothing; a write whose
   * transaction the engine cannot join has committed). The first try is awaited; a failure never
   * reaches the caller: it is logged, counted, and tried again in the background.
   */
  function detached(event: EmitInput, n = 0): Promise<void> {
    return deps.hooks.emit(event).then(
      () => undefined,
      (error) => {
        if (isRefusal(error)) return refused(event.type, error);
        failures.add(1, { 'webhooks.event_type': event.type, 'webhooks.reason': 'store' });
        const last = n >= AGAIN_AFTER_MS.length || closed;
        deps.logger.error(
          last
            ? `better-auth: ${event.type} could not be emitted and is given up`
            : `better-auth: ${event.type} could not be emitted; trying again`,
          { eventType: event.type, error: error instanceof Error ? error.message : String(error) },
        );
        if (last) return;
        // In the background: each try catches its own failure, so this never rejects.
        void new Promise<void>((resolve) => setTimeout(resolve, AGAIN_AFTER_MS[n]).unref()).then(() =>
          closed ? undefined : detached(event, n + 1),
        );
      },
    );
  }

  function refused(type: string, error: unknown) {
    failures.add(1, { 'webhooks.event_type': type, 'webhooks.reason': 'refused' });
    deps.logger.error('better-auth: an event was left out (its data was refused, or the mapping threw); the write itself went ahead', {
      eventType: type,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  return {
    /** A watched write, inside its transaction. */
    async onWrite(write: Write): Promise<void> {
      const cause = deps.cause();
      const transaction = deps.currentTransaction();
      const src = source(cause);
      const row = write.row;
      if (write.model === 'user') {
        const user = row as AuthUser;
        if (write.kind === 'delete') {
          return emit('user.deleted', { data: { user: { id: String(user.id).slice(0, 255) } }, source: src, user }, transaction);
        }
        const memberships =
          write.kind === 'update' && deps.organizations
            ? ((await write.adapter.findMany({ model: 'member', where: [{ field: 'userId', value: user.id }] })) as unknown as AuthMember[])
            : [];
        const type = write.kind === 'create' ? 'user.created' : 'user.updated';
        return emit(type, { data: { user: kindeUser(user, memberships) }, source: src, user }, transaction);
      }
      if (write.model === 'session') {
        if (cause.path !== undefined && NOT_SIGN_IN.some((p) => p.test(cause.path!))) return;
        const userId = String(row.userId);
        const user = (await write.adapter.findOne({ model: 'user', where: [{ field: 'id', value: userId }] })) as AuthUser | null;
        return emit('user.authenticated', { data: authenticated(user, userId, row), source: src, user }, transaction);
      }
      if (write.model === 'member') {
        // The membership's own event, and its user's user.updated with the organizations as
        // they are now (read in the write's transaction: the change included).
        const member = row as unknown as AuthMember;
        const [user, organization] = await Promise.all([
          write.adapter.findOne({ model: 'user', where: [{ field: 'id', value: member.userId }] }) as Promise<AuthUser | null>,
          write.adapter.findOne({
            model: 'organization',
            where: [{ field: 'id', value: member.organizationId }],
          }) as Promise<AuthOrganization | null>,
        ]);
        const type = write.kind === 'create' ? 'membership.created' : write.kind === 'update' ? 'membership.updated' : 'membership.deleted';
        const scope = organization ? { organization } : {};
        await emit(type, { data: kindeMembership(member), source: src, user, ...scope }, transaction);
        if (!user) return;
        const memberships = (await write.adapter.findMany({
          model: 'member',
          where: [{ field: 'userId', value: user.id }],
        })) as unknown as AuthMember[];
        return emit('user.updated', { data: { user: kindeUser(user, memberships) }, source: src, user }, transaction);
      }
      if (write.model === 'invitation') {
        const data = kindeInvitation(row as unknown as AuthInvitation);
        const status = (data?.invitation as { status?: string } | undefined)?.status;
        // An update that leaves it pending (a resend's new expiry) answers nothing.
        if (!data || (write.kind === 'update' && status === 'pending')) return;
        const type = write.kind === 'create' ? 'invitation.created' : (`invitation.${status}` as AuthEventType);
        const organization = (await write.adapter.findOne({
          model: 'organization',
          where: [{ field: 'id', value: row.organizationId }],
        })) as AuthOrganization | null;
        return emit(type, { data, source: src, user: cause.sessionUser, ...(organization ? { organization } : {}) }, transaction);
      }
      if (write.model === 'organization') {
        const organization = row as AuthOrganization;
        const type =
          write.kind === 'create' ? 'organization.created' : write.kind === 'update' ? 'organization.updated' : 'organization.deleted';
        const data = { organization: kindeOrganization(organization) };
        return emit(type, { data, source: src, user: cause.sessionUser, organization }, transaction);
      }
    },

    /** A refused sign-in: nothing was written, so there is no transaction to join (see `detached`). */
    async signInRefused(cause: Cause, user: AuthUser | null, email: unknown, reason: string): Promise<void> {
      const event = prepare('user.authentication_failed', { data: authenticationFailed(user, email, reason), source: source(cause), user });
      if (event) await detached(event);
    },

    /** Stops the background tries (the engine is closing). */
    close() {
      closed = true;
    },
  };
}

/** Our validation's refusals: the data, not the database. */
function isRefusal(error: unknown): boolean {
  return (
    error instanceof TypeError ||
    (error instanceof WebhooksError && ['ERR_VALIDATION', 'ERR_UNKNOWN_EVENT_TYPE', 'ERR_PAYLOAD_TOO_LARGE'].includes(error.code))
  );
}
