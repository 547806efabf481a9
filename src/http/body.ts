import { readBounded } from '../bounded-read.js';
import { HttpError } from './errors.js';

/**
 * Largest management request body, in bytes. The biggest legal webhook (255-character name,
 * 1000-character description, 2048-character endpoint, 50 event types) is well under 32 KiB even
 * with every character escaped, so 64 KiB refuses nothing real and bounds what we buffer.
 */
export const MAX_BODY_BYTES = 64 * 1024;

const TOO_LARGE = () => new HttpError('PAYLOAD_TOO_LARGE', `request body must be at most ${MAX_BODY_BYTES} bytes`, { status: 413 });

/**
 * Reads the body as a JSON object. `required: false` accepts an empty body (as `{}`), for action
 * routes whose body is optional. Refuses with 415 (not JSON), 413 (too large), 400 (not a JSON
 * object), before anything is written.
 */
export async function readJsonObject(request: Request, { required }: { required: boolean }): Promise<Record<string, unknown>> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw TOO_LARGE();
  const bytes = await readBody(request);
  const type = request.headers.get('content-type');
  // An empty optional body is "no options", whatever type a client library labels it with.
  if (bytes.length === 0 && !required) return {};
  if (type === null || !isJson(type)) throw unsupported(type);
  if (bytes.length === 0) throw new HttpError('INVALID_JSON', 'request body is empty; expected a JSON object', { status: 400 });
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError('INVALID_JSON', 'request body is not valid JSON (UTF-8)', { status: 400 });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError('INVALID_BODY', 'request body must be a JSON object', { status: 400 });
  }
  return value as Record<string, unknown>;
}

/** `application/json`, optionally with `charset=utf-8` (any other charset would be misread). */
function isJson(contentType: string): boolean {
  const [media, ...params] = contentType.split(';').map((s) => s.trim().toLowerCase());
  if (media !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || /^charset="?utf-8"?$/.test(p));
}

function unsupported(type: string | null): HttpError {
  const got = type === null ? 'no content-type' : `content-type ${JSON.stringify(type.slice(0, 100))}`;
  return new HttpError('UNSUPPORTED_MEDIA_TYPE', `request body must be application/json (got ${got})`, {
    status: 415,
    headers: { accept: 'application/json' },
  });
}

/** Reads at most MAX_BODY_BYTES; a chunked body that runs over is refused without buffering it. */
async function readBody(request: Request): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  // On overflow the stream is cancelled; the Node glue drains what is left before answering (node.ts).
  const { bytes, overflow } = await readBounded(request.body, MAX_BODY_BYTES);
  if (overflow) throw TOO_LARGE();
  return bytes;
}
