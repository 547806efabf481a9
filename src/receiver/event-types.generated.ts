// Generated from BUILTIN_EVENT_TYPES (src/catalog/builtins.ts) by scripts/event-types.ts.
// Do not edit: run `npm run gen:event-types`. test/receiver/types.test.ts fails when this drifts.
import type { WebhookEnvelope } from './envelope.js';

/** `data` of `user.created` (User created). */
export type UserCreatedData = {
  user: {
    id: string;
    /** format: email */
    email: string | null;
    first_name: string;
    /** may be empty */
    last_name: string;
    phone: string | null;
    username: string | null;
    is_password_reset_requested: boolean;
    is_suspended: boolean;
    organizations: Array<{
      code: string;
      permissions?: null | Array<string | {
        id?: string;
        key: string;
      }>;
      roles?: null | Array<string | {
        id?: string;
        key: string;
      }>;
    }>;
  };
};

/** `user.created`: User created. */
export type UserCreatedEvent = WebhookEnvelope<'user.created', UserCreatedData>;

/** `data` of `user.updated` (User updated). */
export type UserUpdatedData = {
  user: {
    id: string;
    /** format: email */
    email: string | null;
    first_name: string;
    /** may be empty */
    last_name: string;
    phone: string | null;
    username: string | null;
    is_password_reset_requested: boolean;
    is_suspended: boolean;
    organizations: Array<{
      code: string;
      permissions?: null | Array<string | {
        id?: string;
        key: string;
      }>;
      roles?: null | Array<string | {
        id?: string;
        key: string;
      }>;
    }>;
  };
};

/** `user.updated`: User updated. */
export type UserUpdatedEvent = WebhookEnvelope<'user.updated', UserUpdatedData>;

/** `data` of `user.deleted` (User deleted). */
export type UserDeletedData = {
  user: {
    id: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `user.deleted`: User deleted. */
export type UserDeletedEvent = WebhookEnvelope<'user.deleted', UserDeletedData>;

/** `data` of `user.authenticated` (User authenticated). */
export type UserAuthenticatedData = {
  user: {
    id: string;
    connection_id?: string | null;
    organization_code?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `user.authenticated`: User authenticated. */
export type UserAuthenticatedEvent = WebhookEnvelope<'user.authenticated', UserAuthenticatedData>;

/** `data` of `user.authentication_failed` (User authentication failed). */
export type UserAuthenticationFailedData = {
  user: {
    id?: string | null;
    email?: string | null;
    reason?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `user.authentication_failed`: User authentication failed. */
export type UserAuthenticationFailedEvent = WebhookEnvelope<'user.authentication_failed', UserAuthenticationFailedData>;

/** `data` of `organization.created` (Organization created). */
export type OrganizationCreatedData = {
  organization: {
    code: string;
    name: string;
    external_id?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `organization.created`: Organization created. */
export type OrganizationCreatedEvent = WebhookEnvelope<'organization.created', OrganizationCreatedData>;

/** `data` of `organization.updated` (Organization updated). */
export type OrganizationUpdatedData = {
  organization: {
    code: string;
    name: string;
    external_id?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `organization.updated`: Organization updated. */
export type OrganizationUpdatedEvent = WebhookEnvelope<'organization.updated', OrganizationUpdatedData>;

/** `data` of `organization.deleted` (Organization deleted). */
export type OrganizationDeletedData = {
  organization: {
    code: string;
    name?: string;
    external_id?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `organization.deleted`: Organization deleted. */
export type OrganizationDeletedEvent = WebhookEnvelope<'organization.deleted', OrganizationDeletedData>;

/** `data` of `membership.created` (Membership created). */
export type MembershipCreatedData = {
  membership: {
    id: string;
    organization_code: string;
    user_id: string;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
  };
};

/** `membership.created`: Membership created. */
export type MembershipCreatedEvent = WebhookEnvelope<'membership.created', MembershipCreatedData>;

/** `data` of `membership.updated` (Membership updated). */
export type MembershipUpdatedData = {
  membership: {
    id: string;
    organization_code: string;
    user_id: string;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
  };
};

/** `membership.updated`: Membership updated. */
export type MembershipUpdatedEvent = WebhookEnvelope<'membership.updated', MembershipUpdatedData>;

/** `data` of `membership.deleted` (Membership deleted). */
export type MembershipDeletedData = {
  membership: {
    id: string;
    organization_code: string;
    user_id: string;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
  };
};

/** `membership.deleted`: Membership deleted. */
export type MembershipDeletedEvent = WebhookEnvelope<'membership.deleted', MembershipDeletedData>;

/** `data` of `invitation.created` (Invitation created). */
export type InvitationCreatedData = {
  invitation: {
    id: string;
    organization_code: string;
    /** format: email */
    email: string | null;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
    status: "pending" | "accepted" | "rejected" | "canceled";
    inviter_id?: string | null;
    /** ISO 8601 */
    expires_at?: string | null;
  };
};

/** `invitation.created`: Invitation created. */
export type InvitationCreatedEvent = WebhookEnvelope<'invitation.created', InvitationCreatedData>;

/** `data` of `invitation.accepted` (Invitation accepted). */
export type InvitationAcceptedData = {
  invitation: {
    id: string;
    organization_code: string;
    /** format: email */
    email: string | null;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
    status: "pending" | "accepted" | "rejected" | "canceled";
    inviter_id?: string | null;
    /** ISO 8601 */
    expires_at?: string | null;
  };
};

/** `invitation.accepted`: Invitation accepted. */
export type InvitationAcceptedEvent = WebhookEnvelope<'invitation.accepted', InvitationAcceptedData>;

/** `data` of `invitation.rejected` (Invitation rejected). */
export type InvitationRejectedData = {
  invitation: {
    id: string;
    organization_code: string;
    /** format: email */
    email: string | null;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
    status: "pending" | "accepted" | "rejected" | "canceled";
    inviter_id?: string | null;
    /** ISO 8601 */
    expires_at?: string | null;
  };
};

/** `invitation.rejected`: Invitation rejected. */
export type InvitationRejectedEvent = WebhookEnvelope<'invitation.rejected', InvitationRejectedData>;

/** `data` of `invitation.canceled` (Invitation canceled). */
export type InvitationCanceledData = {
  invitation: {
    id: string;
    organization_code: string;
    /** format: email */
    email: string | null;
    roles: null | Array<string | {
      id?: string;
      key: string;
    }>;
    status: "pending" | "accepted" | "rejected" | "canceled";
    inviter_id?: string | null;
    /** ISO 8601 */
    expires_at?: string | null;
  };
};

/** `invitation.canceled`: Invitation canceled. */
export type InvitationCanceledEvent = WebhookEnvelope<'invitation.canceled', InvitationCanceledData>;

/** `data` of `role.created` (Role created). */
export type RoleCreatedData = {
  role: {
    id: string;
    key: string;
    name?: string;
    description?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `role.created`: Role created. */
export type RoleCreatedEvent = WebhookEnvelope<'role.created', RoleCreatedData>;

/** `data` of `role.updated` (Role updated). */
export type RoleUpdatedData = {
  role: {
    id: string;
    key: string;
    name?: string;
    description?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `role.updated`: Role updated. */
export type RoleUpdatedEvent = WebhookEnvelope<'role.updated', RoleUpdatedData>;

/** `data` of `role.deleted` (Role deleted). */
export type RoleDeletedData = {
  role: {
    id: string;
    key?: string;
    name?: string;
    description?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `role.deleted`: Role deleted. */
export type RoleDeletedEvent = WebhookEnvelope<'role.deleted', RoleDeletedData>;

/** `data` of `permission.created` (Permission created). */
export type PermissionCreatedData = {
  permission: {
    id: string;
    key: string;
    name?: string;
    description?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `permission.created`: Permission created. */
export type PermissionCreatedEvent = WebhookEnvelope<'permission.created', PermissionCreatedData>;

/** `data` of `permission.updated` (Permission updated). */
export type PermissionUpdatedData = {
  permission: {
    id: string;
    key: string;
    name?: string;
    description?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `permission.updated`: Permission updated. */
export type PermissionUpdatedEvent = WebhookEnvelope<'permission.updated', PermissionUpdatedData>;

/** `data` of `permission.deleted` (Permission deleted). */
export type PermissionDeletedData = {
  permission: {
    id: string;
    key?: string;
    name?: string;
    description?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `permission.deleted`: Permission deleted. */
export type PermissionDeletedEvent = WebhookEnvelope<'permission.deleted', PermissionDeletedData>;

/** `data` of `subscriber.created` (Subscriber created). */
export type SubscriberCreatedData = {
  subscriber: {
    id: string;
    /** format: email */
    email: string;
    first_name?: string | null;
    last_name?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `subscriber.created`: Subscriber created. */
export type SubscriberCreatedEvent = WebhookEnvelope<'subscriber.created', SubscriberCreatedData>;

/** `data` of `access_request.created` (Access request created). */
export type AccessRequestCreatedData = {
  access_request: {
    id: string;
    user_id?: string | null;
    email?: string | null;
    organization_code?: string | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** `access_request.created`: Access request created. */
export type AccessRequestCreatedEvent = WebhookEnvelope<'access_request.created', AccessRequestCreatedData>;

/** Every built-in event type by its code. */
export type WebhookEventMap = {
  'user.created': UserCreatedEvent;
  'user.updated': UserUpdatedEvent;
  'user.deleted': UserDeletedEvent;
  'user.authenticated': UserAuthenticatedEvent;
  'user.authentication_failed': UserAuthenticationFailedEvent;
  'organization.created': OrganizationCreatedEvent;
  'organization.updated': OrganizationUpdatedEvent;
  'organization.deleted': OrganizationDeletedEvent;
  'membership.created': MembershipCreatedEvent;
  'membership.updated': MembershipUpdatedEvent;
  'membership.deleted': MembershipDeletedEvent;
  'invitation.created': InvitationCreatedEvent;
  'invitation.accepted': InvitationAcceptedEvent;
  'invitation.rejected': InvitationRejectedEvent;
  'invitation.canceled': InvitationCanceledEvent;
  'role.created': RoleCreatedEvent;
  'role.updated': RoleUpdatedEvent;
  'role.deleted': RoleDeletedEvent;
  'permission.created': PermissionCreatedEvent;
  'permission.updated': PermissionUpdatedEvent;
  'permission.deleted': PermissionDeletedEvent;
  'subscriber.created': SubscriberCreatedEvent;
  'access_request.created': AccessRequestCreatedEvent;
};

/** Any built-in event: a union discriminated on `type`. */
export type WebhookEvent = WebhookEventMap[keyof WebhookEventMap];
