/**
 * The receiving half of identity-webhooks: verify and handle the webhooks an identity server
 * sends. Imports nothing but jose, so it loads without the engine's database drivers, in Node,
 * Deno, Bun, edge runtimes and workers.
 *
 * @example
 * ```ts
 * import { createVerifier, createReceiver } from 'identity-webhooks/receiver';
 * const receive = createReceiver({
 *   verifier: createVerifier({ issuer: 'https://auth.example.com' }),
 *   on: { 'user.created': async (event) => welcome(event.data.user) },
 * });
 * ```
 */

export type { EventMap, WebhookEnvelope } from './envelope.js';
export type { VerificationErrorCode } from './errors.js';
export { WebhookVerificationError } from './errors.js';
export type * from './event-types.generated.js';
export type { EventHandlers, ReceiverContext, ReceiverOptions } from './receiver.js';
export { createReceiver } from './receiver.js';
export type { NowSource } from './remote-keyset.js';
export type { SeenStore } from './seen.js';
export { memorySeen } from './seen.js';
export type { StandardVerifierOptions } from './standard.js';
export { createStandardVerifier } from './standard.js';
export type { Verifier, VerifierOptions } from './verifier.js';
export { createVerifier } from './verifier.js';
