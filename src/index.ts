export type { EventTypeDefinition } from './catalog/builtins.js';
export { BUILTIN_EVENT_TYPES } from './catalog/builtins.js';
export type { CatalogEntry } from './catalog/catalog.js';
export type { JsonSchema } from './catalog/schema.js';
export type { Clock, TimerHandle } from './clock.js';
export { ManualClock, systemClock } from './clock.js';
export type { DashboardTheme } from './dashboard/look.js';
export type { DashboardCapability, DashboardLinkOptions } from './dashboard-links.js';
export type { BackoffOptions } from './delivery/backoff.js';
export { DEFAULT_BACKOFF_SCHEDULE } from './delivery/backoff.js';
export type { AddressCategory, AddressClass } from './delivery/guard/address.js';
export { classifyAddress } from './delivery/guard/address.js';
export type { CheckedEndpoint } from './delivery/guard/check.js';
export { checkEndpoint } from './delivery/guard/check.js';
export type { Guard, GuardOptions, ResolvedAddress, Resolver } from './delivery/guard/guard.js';
export { cachingResolver, createGuard, systemResolver } from './delivery/guard/guard.js';
export type { ClientCertificate, HttpTransportOptions, Transport, TransportRequest, TransportResponse } from './delivery/transport.js';
export { httpTransport, TransportError } from './delivery/transport.js';
export { createWebhooks } from './engine.js';
export type { WebhooksErrorCode } from './errors.js';
export { LimitReachedError, NotFoundError, ValidationError, WebhooksError } from './errors.js';
export type * from './model.js';
export type { SecretsKeyInput } from './secrets/seal.js';
export type { PublicJwk, SigningKey } from './signing/keys.js';
export { generateSigningKey } from './signing/keys.js';
export type { KeyInfo, RotateOptions } from './signing/keyset.js';
export type { WebhookClaims } from './signing/token.js';
export type { HourCounts, HourRecord } from './stats.js';
export type {
  ClaimArgs,
  DeliveryFilter,
  DeliveryStore,
  EventCursor,
  NoticeStore,
  RecordAttemptArgs,
  RecordResult,
  StatsStore,
  Store,
  StoreErrors,
  WebhookPatch,
  WebhookStore,
} from './store.js';
export type {
  ActivityPoint,
  AuthorizeResult,
  BuiltinEventData,
  CustomEventTypes,
  DeliveryListOptions,
  DeliveryMessage,
  DeliveryOptions,
  DeliveryPage,
  EmitInput,
  EmittedEvent,
  EnvironmentOption,
  EventSearchOptions,
  EventSearchPage,
  EventType,
  EventTypes,
  Logger,
  LogMeta,
  Management,
  Notifier,
  StatsRange,
  TelemetryOptions,
  WebhookActivity,
  WebhookDisabledInfo,
  WebhookInput,
  WebhookOverview,
  WebhookSecret,
  Webhooks,
  WebhooksOptions,
} from './types.js';
export { UnknownOptionError } from './unknown-options.js';
