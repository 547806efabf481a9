import { readBounded } from './bounded-read.js';
import { WebhookVerificationError } from './errors.js';

/** Longest `webhook-id` accepted; ours are 36 characters. */
const MAX_ID_LENGTH = 255;

/** The `webhook-id` header: the delivery's id, the same on every attempt. */
export function webhookIdOf(request: Request): string {
  const id = request.headers.get('webhook-id');
  if (!id || id.length > MAX_ID_LENGTH || !/^[\x21-\x7e]+$/.test(id)) {
    throw new WebhookVerificationError('ERR_WEBHOOK_ID', 'a webhook-id header (1-255 visible ASCII characters) is required');
  }
  return id;
}

/**
 * The body as raw text, at most `maxBytes`. Only `application/jwt` is accepted: a JSON body is the
 * legacy format, and a framework that parsed it as JSON would have nothing left to verify.
 */
export async function readToken(request: Request, maxBytes: number): Promise<string> {
  return (await readBody(request, maxBytes, 'application/jwt')).trim();
}

/** The body as raw text, exactly as sent (a signature covers every byte), of content type `expected`. */
export async function readBody(request: Request, maxBytes: number, expected: 'application/jwt' | 'application/json'): Promise<string> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== expected) {
    throw new WebhookVerificationError(
      'ERR_CONTENT_TYPE',
      expected === 'application/jwt'
        ? 'content-type must be application/jwt (the body is a signed JWT)'
        : 'content-type must be application/json (a Standard Webhooks body)',
    );
  }
  const bytes = await readBounded(request, maxBytes, () => tooLarge(maxBytes));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new WebhookVerificationError('ERR_MALFORMED_TOKEN', 'the body is not UTF-8 text');
  }
  if (text.trim() === '') throw new WebhookVerificationError('ERR_EMPTY_BODY', 'the body is empty');
  return text;
}

function tooLarge(maxBytes: number): WebhookVerificationError {
  return new WebhookVerificationError('ERR_BODY_TOO_LARGE', `the body is larger than ${maxBytes} bytes`);
}
