import type { JsonSchema } from './schema.js';

const user = {
  id: 'kp_0123456789abcdef0123456789abcdef',
  email: 'ada@example.com',
  first_name: 'Ada',
  last_name: 'Lovelace',
  phone: '+14155550123',
  username: 'ada',
  is_password_reset_requested: false,
  is_suspended: false,
  organizations: [{ code: 'org_0123456789ab', permissions: ['read:reports'], roles: [{ id: 'rol_0123456789ab', key: 'admin' }] }],
};
const organization = { code: 'org_0123456789ab', name: 'Acme Corporation', external_id: 'acme-42' };
const role = { id: 'rol_0123456789ab', key: 'billing-admin', name: 'Billing admin', description: 'Manages invoices and payment methods' };
const permission = { id: 'perm_0123456789ab', key: 'read:invoices', name: 'Read invoices', description: null };

function invitationExample(status: string) {
  return {
    id: 'inv_0123456789ab',
    organization_code: organization.code,
    email: 'grace@example.com',
    roles: ['member'],
    status,
    inviter_id: user.id,
    expires_at: '2026-01-03T00:00:00.000Z',
  };
}

/**
 * The `data` a test event of each built-in type carries: realistic, and valid against the type's
 * schema (checked when the catalog is built, and by a test for every type).
 */
export const BUILTIN_EXAMPLES: Readonly<Record<string, Record<string, unknown>>> = {
  'user.created': { user },
  'user.updated': { user: { ...user, last_name: 'King', is_password_reset_requested: true } },
  'user.deleted': { user: { id: user.id } },
  'user.authenticated': { user: { id: user.id, connection_id: 'conn_0123456789ab', organization_code: organization.code } },
  'user.authentication_failed': { user: { id: null, email: 'someone@example.com', reason: 'invalid password' } },
  'organization.created': { organization },
  'organization.updated': { organization: { ...organization, name: 'Acme Corp.' } },
  'organization.deleted': { organization: { code: organization.code } },
  'membership.created': {
    membership: { id: 'mem_0123456789ab', organization_code: organization.code, user_id: user.id, roles: ['member'] },
  },
  'membership.updated': {
    membership: { id: 'mem_0123456789ab', organization_code: organization.code, user_id: user.id, roles: ['admin'] },
  },
  'membership.deleted': {
    membership: { id: 'mem_0123456789ab', organization_code: organization.code, user_id: user.id, roles: ['admin'] },
  },
  'invitation.created': { invitation: invitationExample('pending') },
  'invitation.accepted': { invitation: invitationExample('accepted') },
  'invitation.rejected': { invitation: invitationExample('rejected') },
  'invitation.canceled': { invitation: invitationExample('canceled') },
  'role.created': { role },
  'role.updated': { role: { ...role, name: 'Billing administrator' } },
  'role.deleted': { role: { id: role.id } },
  'permission.created': { permission },
  'permission.updated': { permission: { ...permission, description: 'Lets a user read every invoice' } },
  'permission.deleted': { permission: { id: permission.id } },
  'subscriber.created': {
    subscriber: { id: 'sub_0123456789ab', email: 'newsletter@example.com', first_name: 'Grace', last_name: 'Hopper' },
  },
  'access_request.created': {
    access_request: { id: 'ar_0123456789ab', user_id: user.id, email: user.email, organization_code: organization.code },
  },
};

/**
 * A plausible value for a host's event type that came without an `example`: required members
 * only, each the smallest value its schema allows (a `const` or the first `enum` member, a string
 * of `minLength` in the right `format`, `minimum` for numbers, the first workable `anyOf`
 * branch). The catalog validates it; a schema this cannot satisfy makes the host give an example.
 */
export function exampleFromSchema(schema: JsonSchema): unknown {
  if (schema.const !== undefined) return structuredClone(schema.const);
  if (schema.enum !== undefined) return structuredClone(schema.enum[0]);
  if (schema.anyOf) return exampleFromSchema(schema.anyOf.find((s) => !isNullOnly(s)) ?? schema.anyOf[0]!);
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (schema.properties ? 'object' : 'null');
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = exampleFromSchema(schema.properties?.[key] ?? {});
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => exampleFromSchema(schema.items ?? {}));
    case 'string':
      return stringExample(schema);
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.maximum !== undefined ? Math.min(0, schema.maximum) : 0);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function stringExample(schema: JsonSchema): string {
  const byFormat: Record<string, string> = { email: 'user@example.com', uri: 'https://example.com/', 'date-time': '2026-01-01T00:00:00Z' };
  const base = (schema.format && byFormat[schema.format]) || 'example';
  return base.length >= (schema.minLength ?? 0) ? base : base.padEnd(schema.minLength!, 'x');
}

function isNullOnly(schema: JsonSchema): boolean {
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.every((t) => t === 'null'));
}
