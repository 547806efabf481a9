import type { EventMap } from './envelope.js';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEventMap } from './event-types.generated.js';
import { readBody, readToken, webhookIdOf } from './request.js';
import { memorySeen, type SeenStore } from './seen.js';
import type { Verifier } from './verifier.js';

/** What a handler gets beside the event. */
export interface ReceiverContext {
  /** The delivery's id (`webhook-id`), the same on every attempt: a key for your own idempotency. */
  webhookId: string;
  /** The incoming request (its body is already read). */
  request: Request;
}

/** One handler per event type; types without a handler are acknowledged and dropped. */
export type EventHandlers<M extends EventMap = WebhookEventMap> = {
  [K in keyof M & string]?: (event: M[K], ctx: ReceiverContext) => unknown;
};

export interface ReceiverOptions<M extends EventMap = WebhookEventMap> {
  verifier: Verifier<M>;
  on: EventHandlers<M>;
  /** Processed `webhook-id`s. Default: {@link memorySeen} (this process, last 10 000). */
  seen?: SeenStore;
  /** Largest body read. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Told about handler and store failures and key set fetch failures (the sender only sees a generic
   * message; `error.message` says what to check). Default: console.error.
   */
  onError?: (error: unknown, info: { webhookId: string; type: string }) => void;
}

/**
 * Makes a webhook endpoint: `(Request) => Promise<Response>`, for any framework or runtime with
 * web Requests. It reads the body as text, verifies it (400 when that fails), skips a
 * `webhook-id` already processed (200), calls the handler for the event's type, and answers 200,
 * for types without a handler too. A handler that throws is answered 400 `{ "message" }` and the
 * id is not marked seen, so the sender attempts it again.
 *
 * Concurrent duplicates (a next attempt arriving while the first attempt's handler is still
 * running, as when a slow handler outlives the sender's timeout) are answered 409 without running
 * the handler: the sender tries again later and then finds the id processed, or runs it if the
 * first attempt failed. This holds within one process; across processes, make handlers idempotent
 * on `ctx.webhookId`.
 *
 * @example
 * ```ts
 * const receive = createReceiver({
 *   verifier: createVerifier({ issuer: 'https://auth.example.com' }),
 *   on: {
 *     'user.created': async (event) => { await db.users.insert(event.data.user) },
 *   },
 * });
 * export const POST = receive; // a Next.js route handler
 * ```
 */
export function createReceiver<M extends EventMap = WebhookEventMap>(options: ReceiverOptions<M>): (request: Request) => Promise<Response> {
  const { verifier, on } = options ?? ({} as ReceiverOptions<M>);
  if (typeof verifier?.verify !== 'function') throw new TypeError('createReceiver: verifier must come from createVerifier()');
  if (typeof on !== 'object' || on === null) throw new TypeError('createReceiver: on must map event types to handlers');
  const handlers = new Map<string, (event: unknown, ctx: ReceiverContext) => unknown>();
  for (const [type, fn] of Object.entries(on)) {
    if (typeof fn !== 'function') throw new TypeError(`createReceiver: on[${JSON.stringify(type)}] must be a function`);
    handlers.set(type, fn as (event: unknown, ctx: ReceiverContext) => unknown);
  }
  const seen = options.seen ?? memorySeen();
  if (typeof seen.has !== 'function' || typeof seen.add !== 'function')
    throw new TypeError('createReceiver: seen must have has() and add()');
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1) throw new TypeError('createReceiver: maxBodyBytes must be a positive integer');
  const onError =
    options.onError ??
    ((error, info) =>
      console.error(`[identity-webhooks] webhook ${JSON.stringify(info.webhookId)} (${info.type || 'not verified'}) failed`, error));
  const inFlight = new Set<string>();

  return async (request) => {
    if (request.method !== 'POST') return reply(405, { message: 'webhooks are POSTed' }, { allow: 'POST' });
    let event: { type: string };
    let webhookId: string;
    try {
      webhookId = webhookIdOf(request);
      // Standard Webhooks (a JSON body and its headers) or a JWT body.
      event = verifier.verifyRequest
        ? await verifier.verifyRequest(await readBody(request, maxBodyBytes, 'application/json'), request.headers)
        : await verifier.verify(await readToken(request, maxBodyBytes));
    } catch (error) {
      const info = { webhookId: request.headers.get('webhook-id') ?? '', type: '' };
      if (error instanceof WebhookVerificationError && error.code === 'ERR_JWKS_UNAVAILABLE') {
        // Our side failed: the message (the URL tried, why, what to check) is for our operator; the
        // sender can only try again, which the 503 already tells it.
        onError(error, info);
        return reply(503, { message: "the issuer's key set is unavailable; try again later", code: error.code });
      }
      if (error instanceof WebhookVerificationError) return reply(error.status, { message: error.message, code: error.code });
      onError(error, info);
      return reply(400, { message: 'the webhook could not be verified' });
    }

    const handler = handlers.get(event.type);
    if (!handler) return reply(200, { message: 'no handler for this event type' });
    if (inFlight.has(webhookId)) return reply(409, { message: 'this webhook-id is being processed; try again later' });
    inFlight.add(webhookId);
    try {
      return await handle(handler, event, { webhookId, request }, seen, onError);
    } finally {
      // Released only after the id is recorded, so a duplicate cannot slip in between.
      inFlight.delete(webhookId);
    }
  };
}

async function handle(
  handler: (event: unknown, ctx: ReceiverContext) => unknown,
  event: { type: string },
  ctx: ReceiverContext,
  seen: SeenStore,
  onError: NonNullable<ReceiverOptions['onError']>,
): Promise<Response> {
  const info = { webhookId: ctx.webhookId, type: event.type };
  try {
    if (await seen.has(ctx.webhookId)) return reply(200, { message: 'already processed' });
    await handler(event, ctx);
  } catch (error) {
    onError(error, info);
    return reply(400, { message: `processing ${event.type} failed` });
  }
  try {
    await seen.add(ctx.webhookId);
  } catch (error) {
    // The work is done: answering 400 would make the sender resend it and run it twice.
    onError(error, info);
  }
  return reply(200, { message: 'processed' });
}

function reply(status: number, body: { message: string; code?: string }, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}
