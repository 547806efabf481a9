export { createWebhooks } from './engine.js';
export type {
  WebhooksOptions,
  DeliveryOptions,
  Webhooks,
  Management,
  EnvironmentOption,
  AuthorizeResult,
  Notifier,
  WebhookDisabledInfo,
  Logger,
  LogMeta,
  TelemetryOptions,
  EmitInput,
  EmittedEvent,
} from './types.js';
export { generateSigningKey } from './signing/keys.js';
export type { SigningKey, PublicJwk } from './signing/keys.js';
export type { WebhookClaims } from './signing/token.js';
export { ManualClock, systemClock } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export { WebhooksError, ValidationError, NotFoundError, LimitReachedError } from './errors.js';
export type { WebhooksErrorCode } from './errors.js';
export { httpTransport, TransportError } from './delivery/transport.js';
export type { Transport, TransportRequest, TransportResponse, HttpTransportOptions } from './delivery/transport.js';
export { checkEndpoint } from './delivery/guard/check.js';
export type { CheckedEndpoint } from './delivery/guard/check.js';
export { cachingResolver, createGuard, systemResolver } from './delivery/guard/guard.js';
export type { Guard, GuardOptions, Resolver, ResolvedAddress } from './delivery/guard/guard.js';
export { classifyAddress } from './delivery/guard/address.js';
export type { AddressCategory, AddressClass } from './delivery/guard/address.js';
export type { KeyInfo, RotateOptions } from './signing/keyset.js';
export { DEFAULT_BACKOFF_SCHEDULE } from './delivery/backoff.js';
export type { BackoffOptions } from './delivery/backoff.js';
export { BUILTIN_EVENT_TYPES } from './catalog/builtins.js';
export type { EventTypeDefinition } from './catalog/builtins.js';
export type { CatalogEntry } from './catalog/catalog.js';
export type { JsonSchema } from './catalog/schema.js';
export type { Store, WebhookPatch, DeliveryFilter, ClaimArgs, RecordAttemptArgs } from './store.js';
export type { WebhookInput, EventType, EventTypes, BuiltinEventData, CustomEventTypes } from './types.js';
export type * from './model.js';
