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
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/jwt') {
    throw new WebhookVerificationError('ERR_CONTENT_TYPE', 'content-type must be application/jwt (the body is a signed JWT)');
  }
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readBounded(request, maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new WebhookVerificationError('ERR_MALFORMED_TOKEN', 'the body is not UTF-8 text');
  }
  text = text.trim();
  if (text === '') throw new WebhookVerificationError('ERR_EMPTY_BODY', 'the body is empty');
  return text;
}

// Our own copy of the engine's bounded reader: the receiver must import nothing but jose, so it cannot share one.
async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      // Stop reading: a sender that lies in content-length must not make us buffer without end.
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function tooLarge(maxBytes: number): WebhookVerificationError {
  return new WebhookVerificationError('ERR_BODY_TOO_LARGE', `the body is larger than ${maxBytes} bytes`);
}
