export { createWebhooks } from './engine.js';
export type {
  WebhooksOptions,
  Webhooks,
  AuthorizeResult,
  Notifier,
  WebhookDisabledInfo,
  Logger,
  EmitInput,
  EmittedEvent,
} from './engine.js';
export { generateSigningKey } from './signing/keys.js';
export type { SigningKey, PublicJwk } from './signing/keys.js';
export type { WebhookClaims } from './signing/token.js';
export { ManualClock, systemClock } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export { WebhooksError, ValidationError, NotFoundError, LimitReachedError } from './errors.js';
export type { WebhooksErrorCode } from './errors.js';
export { httpTransport, TransportError } from './delivery/transport.js';
export type { Transport, TransportRequest, TransportResponse, HttpTransportOptions } from './delivery/transport.js';
export { checkEndpoint } from './delivery/endpoint-check.js';
export type { CheckedEndpoint } from './delivery/endpoint-check.js';
export { networkPolicy, systemResolver } from './delivery/network-policy.js';
export type { NetworkPolicy, NetworkPolicyOptions, Resolver, ResolvedAddress } from './delivery/network-policy.js';
export { classifyAddress } from './delivery/address-policy.js';
export type { AddressCategory, AddressClass } from './delivery/address-policy.js';
export type { KeyInfo, RotateOptions } from './signing/keyset.js';
export { DEFAULT_RETRY_SCHEDULE } from './scheduler/retry.js';
export type { RetryOptions } from './scheduler/retry.js';
export { BUILTIN_EVENT_TYPES } from './catalog/builtins.js';
export type { EventTypeDefinition } from './catalog/builtins.js';
export type { CatalogEntry } from './catalog/catalog.js';
export type { JsonSchema } from './catalog/schema.js';
export type { Store, WebhookPatch, DeliveryFilter, ClaimArgs, RecordAttemptArgs } from './store.js';
export type * from './model.js';
