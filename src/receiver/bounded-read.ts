/**
 * The receiver's one bounded body reader, for the deliveries it verifies (request.ts) and the key
 * sets it fetches (remote-keyset.ts): a declared `content-length` past `maxBytes` is refused before
 * reading, and the stream is cancelled as soon as it passes `maxBytes`, so memory stays bounded
 * whatever the other side sends or claims. Throws what `tooLarge()` returns; the body is cancelled
 * first either way (a sender that lies in content-length must not make us buffer without end, and
 * an unread fetch response would hold its connection).
 *
 * The engine has its own reader (src/bounded-read.ts), but the receiver cannot share it: a
 * receiving service installs the package only for `identity-webhooks/receiver`, which must import
 * nothing but jose (test/structure.test.ts enforces it), so it keeps this copy.
 */
export async function readBounded(message: Request | Response, maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  const declared = Number(message.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await message.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!message.body) return new Uint8Array(0);
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
