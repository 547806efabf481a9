/**
 * better-auth's records in the Kinde shapes of the built-in event types, leniently: whatever
 * would fail the schema (src/catalog/builtins.ts) is clamped or left out, so that our validation
 * can never be the reason a sign-up fails.
 */

/** A better-auth user row as the adapter returns it (core fields, plus the username, phone and admin plugins' when present). */
export interface AuthUser {
  id: string;
  email?: string | null;
  name?: string | null;
  emailVerified?: boolean | null;
  image?: string | null;
  username?: string | null;
  phoneNumber?: string | null;
  banned?: boolean | null;
  [field: string]: unknown;
}

/** A better-auth organization row (organization plugin). */
export interface AuthOrganization {
  id: string;
  name?: string | null;
  slug?: string | null;
  [field: string]: unknown;
}

/** A membership row of the organization plugin (`role` may list several roles, comma-separated). */
export interface AuthMember {
  /** The membership's id (absent in rows read before memberships were events). */
  id?: string;
  organizationId: string;
  /** The member (always in a membership row; absent where only the organizations are read). */
  userId?: string;
  role?: string | null;
}

/** An invitation row of the organization plugin. */
export interface AuthInvitation {
  id: string;
  organizationId: string;
  email?: string | null;
  role?: string | null;
  status?: string | null;
  inviterId?: string | null;
  expiresAt?: Date | string | number | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const HAS_LONE_SURROGATE = new RegExp(LONE_SURROGATE.source);

/** At most `max` UTF-16 units, never cutting a surrogate pair in half; lone surrogates become U+FFFD. */
export function clamp(value: string, max: number): string {
  const text = value.replace(LONE_SURROGATE, '\ufffd');
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

const text = (value: unknown, max: number): string | null => (typeof value === 'string' && value.length > 0 ? clamp(value, max) : null);

/** `first_name` and `last_name` from better-auth's single `name`: the first word, and the rest ('' when none). */
export function splitName(name: unknown): { first: string; last: string } {
  const full = typeof name === 'string' ? name.trim() : '';
  const space = full.search(/\s/);
  if (space < 0) return { first: clamp(full, 255), last: '' };
  return { first: clamp(full.slice(0, space), 255), last: clamp(full.slice(space).trim(), 255) };
}

/** The email when it is one the schema accepts, else null (better-auth allows what our schema may not). */
export function emailOf(value: unknown): string | null {
  return typeof value === 'string' && value.length <= 320 && EMAIL.test(value) && !HAS_LONE_SURROGATE.test(value) ? value : null;
}

/** `data.user` of user.created / user.updated, in Kinde's shape. */
export function kindeUser(user: AuthUser, memberships: readonly AuthMember[] = []): Record<string, unknown> {
  const { first, last } = splitName(user.name);
  return {
    id: clamp(String(user.id), 255),
    email: emailOf(user.email),
    first_name: first,
    last_name: last,
    phone: text(user.phoneNumber, 64),
    username: text(user.username, 255),
    is_password_reset_requested: false,
    is_suspended: user.banned === true,
    organizations: memberships.slice(0, 1000).map((m) => ({
      code: clamp(String(m.organizationId), 255),
      roles: roleList(m.role),
    })),
  };
}

function roleList(role: unknown): string[] | null {
  if (typeof role !== 'string' || role.length === 0) return null;
  return role
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r.length > 0)
    .slice(0, 1000)
    .map((r) => clamp(r, 255));
}

/** `data.organization` of the organization events: Kinde's `code` is better-auth's id. */
export function kindeOrganization(organization: AuthOrganization): Record<string, unknown> {
  return {
    code: clamp(String(organization.id), 255),
    name: text(organization.name, 255) ?? '',
    external_id: null,
    ...(typeof organization.slug === 'string' ? { slug: clamp(organization.slug, 255) } : {}),
  };
}

/** `data` of user.authenticated: the user and, when the session names one, its active organization. */
export function authenticated(user: AuthUser | null, userId: string, session: Record<string, unknown>): Record<string, unknown> {
  return {
    user: {
      id: clamp(String(userId), 255),
      email: emailOf(user?.email),
      connection_id: null,
      organization_code: text(session.activeOrganizationId, 255),
    },
  };
}

/** `data` of user.authentication_failed: the user when known (the email may name no one). */
export function authenticationFailed(user: AuthUser | null, email: unknown, reason: string): Record<string, unknown> {
  return {
    user: {
      id: user ? clamp(String(user.id), 255) : null,
      email: typeof email === 'string' ? clamp(email, 320) : null,
      reason: clamp(reason, 1000),
    },
  };
}

/** `data` of membership.*: the membership and its roles. */
export function kindeMembership(member: AuthMember): Record<string, unknown> {
  return {
    membership: {
      id: clamp(String(member.id ?? `${member.organizationId}:${member.userId}`), 255),
      organization_code: clamp(String(member.organizationId), 255),
      user_id: clamp(String(member.userId ?? ''), 255) || 'unknown',
      roles: roleList(member.role),
    },
  };
}

const INVITATION_STATUSES = new Set(['pending', 'accepted', 'rejected', 'canceled']);

/** `data` of invitation.*, or null when its status is none of the catalog's (nothing to tell). */
export function kindeInvitation(invitation: AuthInvitation): Record<string, unknown> | null {
  const status = String(invitation.status ?? 'pending');
  if (!INVITATION_STATUSES.has(status)) return null;
  const expires = invitation.expiresAt == null ? null : new Date(invitation.expiresAt as string);
  return {
    invitation: {
      id: clamp(String(invitation.id), 255),
      organization_code: clamp(String(invitation.organizationId), 255),
      email: emailOf(invitation.email),
      roles: roleList(invitation.role),
      status,
      inviter_id: text(invitation.inviterId, 255),
      expires_at: expires && !Number.isNaN(expires.getTime()) ? expires.toISOString() : null,
    },
  };
}
