import type { JsonSchema } from './schema.js';

/**
 * The identity event types every host gets. Schemas describe `data` (the envelope - type,
 * event_id, timestamps, source - is the engine's). `user.created` / `user.updated` carry the user
 * exactly as identity servers publish it: nullable email, phone and username, last_name possibly ''.
 */
export interface EventTypeDefinition {
  /** Dotted code used on the wire and in subscriptions (`user.created`). */
  code: string;
  /** Human label. */
  name: string;
  /** Who defined it: `kinde` for built-ins (wire-compatibility), the host's own label otherwise. */
  origin: string;
  /** JSON Schema (see schema.ts for the supported subset) of the event's `data`. */
  schema: JsonSchema;
  /**
   * The `data` of a test event of this type (`hooks.webhooks.test`). Must validate against
   * `schema` (checked at startup). Default: built from the schema's required members.
   */
  example?: Record<string, unknown>;
  /**
   * Where the event's **subject** is in `data`, as a JSON pointer (RFC 6901, `/user/id`): what a
   * webhook with `ordering: 'per-subject'` orders its deliveries by (docs/ordering.md). A string
   * (or number) found there is the subject; anything else, or no pointer, and the event has none.
   */
  subject?: string;
}

const id: JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };
const nullableString = (maxLength = 255): JsonSchema => ({ type: ['string', 'null'], maxLength });

const grantList: JsonSchema = {
  anyOf: [
    { type: 'null' },
    {
      type: 'array',
      maxItems: 1000,
      items: {
        anyOf: [
          { type: 'string', maxLength: 255 },
          { type: 'object', properties: { id, key: { type: 'string', maxLength: 255 } }, required: ['key'], additionalProperties: false },
        ],
      },
    },
  ],
};

/** `data.user` of user.created and user.updated. */
export const userSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'email', 'first_name', 'last_name', 'phone', 'username', 'is_password_reset_requested', 'is_suspended', 'organizations'],
  properties: {
    id,
    email: { type: ['string', 'null'], maxLength: 320, format: 'email' },
    first_name: { type: 'string', maxLength: 255 },
    last_name: { type: 'string', maxLength: 255, description: 'may be empty' },
    phone: nullableString(64),
    username: nullableString(),
    is_password_reset_requested: { type: 'boolean' },
    is_suspended: { type: 'boolean' },
    organizations: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['code'],
        properties: { code: id, permissions: grantList, roles: grantList },
      },
    },
  },
};

const ref = (key: string, extra: Record<string, JsonSchema> = {}, required = ['id']): JsonSchema => ({
  type: 'object',
  required: [key],
  properties: {
    [key]: { type: 'object', required, properties: { id, ...extra }, additionalProperties: true },
  },
  additionalProperties: true,
});

const org = (full: boolean): JsonSchema => ({
  type: 'object',
  required: ['organization'],
  additionalProperties: true,
  properties: {
    organization: {
      type: 'object',
      required: full ? ['code', 'name'] : ['code'],
      properties: { code: id, name: { type: 'string', maxLength: 255 }, external_id: nullableString() },
      additionalProperties: true,
    },
  },
});

const keyed = {
  key: { type: 'string', minLength: 1, maxLength: 255 },
  name: { type: 'string', maxLength: 255 },
  description: nullableString(1000),
} satisfies Record<string, JsonSchema>;

const user = (schema: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['user'],
  additionalProperties: false,
  properties: { user: schema },
});

/** `data.membership` of membership.*: a user's membership of an organization, with its roles. */
const membership: JsonSchema = {
  type: 'object',
  required: ['membership'],
  additionalProperties: false,
  properties: {
    membership: {
      type: 'object',
      required: ['id', 'organization_code', 'user_id', 'roles'],
      additionalProperties: false,
      properties: { id, organization_code: id, user_id: id, roles: grantList },
    },
  },
};

/** `data.invitation` of invitation.*: who was invited to which organization, with which roles, by whom. */
const invitation: JsonSchema = {
  type: 'object',
  required: ['invitation'],
  additionalProperties: false,
  properties: {
    invitation: {
      type: 'object',
      required: ['id', 'organization_code', 'email', 'roles', 'status'],
      additionalProperties: false,
      properties: {
        id,
        organization_code: id,
        email: { type: ['string', 'null'], maxLength: 320, format: 'email' },
        roles: grantList,
        status: { enum: ['pending', 'accepted', 'rejected', 'canceled'] },
        inviter_id: nullableString(),
        expires_at: { type: ['string', 'null'], maxLength: 64, description: 'ISO 8601' },
      },
    },
  },
};

export const BUILTIN_EVENT_TYPES: readonly EventTypeDefinition[] = [
  // Subjects (ordered delivery per subject, docs/ordering.md): the user's id for user.*, the
  // organization's code for organization.*, the role's, permission's, subscriber's or access
  // request's id for theirs.
  { code: 'user.created', name: 'User created', origin: 'kinde', schema: user(userSchema), subject: '/user/id' },
  { code: 'user.updated', name: 'User updated', origin: 'kinde', schema: user(userSchema), subject: '/user/id' },
  { code: 'user.deleted', name: 'User deleted', origin: 'kinde', schema: ref('user'), subject: '/user/id' },
  {
    code: 'user.authenticated',
    name: 'User authenticated',
    origin: 'kinde',
    schema: ref('user', { connection_id: nullableString(), organization_code: nullableString() }),
    subject: '/user/id',
  },
  {
    code: 'user.authentication_failed',
    name: 'User authentication failed',
    origin: 'kinde',
    // The user may not exist (unknown email), so the id is optional here (no id: no subject).
    schema: ref('user', { id: nullableString(), email: nullableString(320), reason: nullableString(1000) }, []),
    subject: '/user/id',
  },
  { code: 'organization.created', name: 'Organization created', origin: 'kinde', schema: org(true), subject: '/organization/code' },
  { code: 'organization.updated', name: 'Organization updated', origin: 'kinde', schema: org(true), subject: '/organization/code' },
  { code: 'organization.deleted', name: 'Organization deleted', origin: 'kinde', schema: org(false), subject: '/organization/code' },
  // Memberships and invitations (the identity server's own: Kinde tells them in user.updated's
  // organizations only). A membership's subject is its user, so per-subject ordering keeps it in
  // line with that user's user.updated; an invitation's is itself.
  {
    code: 'membership.created',
    name: 'Membership created',
    origin: 'identity-webhooks',
    schema: membership,
    subject: '/membership/user_id',
  },
  {
    code: 'membership.updated',
    name: 'Membership updated',
    origin: 'identity-webhooks',
    schema: membership,
    subject: '/membership/user_id',
  },
  {
    code: 'membership.deleted',
    name: 'Membership deleted',
    origin: 'identity-webhooks',
    schema: membership,
    subject: '/membership/user_id',
  },
  { code: 'invitation.created', name: 'Invitation created', origin: 'identity-webhooks', schema: invitation, subject: '/invitation/id' },
  { code: 'invitation.accepted', name: 'Invitation accepted', origin: 'identity-webhooks', schema: invitation, subject: '/invitation/id' },
  { code: 'invitation.rejected', name: 'Invitation rejected', origin: 'identity-webhooks', schema: invitation, subject: '/invitation/id' },
  { code: 'invitation.canceled', name: 'Invitation canceled', origin: 'identity-webhooks', schema: invitation, subject: '/invitation/id' },
  { code: 'role.created', name: 'Role created', origin: 'kinde', schema: ref('role', keyed, ['id', 'key']), subject: '/role/id' },
  { code: 'role.updated', name: 'Role updated', origin: 'kinde', schema: ref('role', keyed, ['id', 'key']), subject: '/role/id' },
  { code: 'role.deleted', name: 'Role deleted', origin: 'kinde', schema: ref('role', keyed), subject: '/role/id' },
  {
    code: 'permission.created',
    name: 'Permission created',
    origin: 'kinde',
    schema: ref('permission', keyed, ['id', 'key']),
    subject: '/permission/id',
  },
  {
    code: 'permission.updated',
    name: 'Permission updated',
    origin: 'kinde',
    schema: ref('permission', keyed, ['id', 'key']),
    subject: '/permission/id',
  },
  { code: 'permission.deleted', name: 'Permission deleted', origin: 'kinde', schema: ref('permission', keyed), subject: '/permission/id' },
  {
    code: 'subscriber.created',
    name: 'Subscriber created',
    origin: 'kinde',
    subject: '/subscriber/id',
    schema: ref(
      'subscriber',
      { email: { type: 'string', maxLength: 320, format: 'email' }, first_name: nullableString(), last_name: nullableString() },
      ['id', 'email'],
    ),
  },
  {
    code: 'access_request.created',
    name: 'Access request created',
    origin: 'kinde',
    subject: '/access_request/id',
    schema: ref('access_request', { user_id: nullableString(), email: nullableString(320), organization_code: nullableString() }),
  },
];
