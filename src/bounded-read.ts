/** A web stream (a `Request` body) or any async iterable of bytes (a Node stream). */
export type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/**
 * Reads at most a little past `maxBytes` of a body, then stops and cancels the rest unread, so an
 * endless or huge body costs at most that much memory. Returns the first `maxBytes` bytes and
 * whether there was more. The management API's bounded reader: it refuses an overflowing request
 * (413). The transport keeps the start of a response through undici's dispatch handler instead
 * (`delivery/transport.ts`), and the receiver has its own copy (it must import nothing but jose).
 *
 * @example
 * ```ts
 * const { bytes, overflow } = await readBounded(request.body!, 64 * 1024);
 * ```
 */
export async function readBounded(source: ByteSource, maxBytes: number): Promise<{ bytes: Uint8Array; overflow: boolean }> {
  const iterator = iterate(source);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let overflow = false;
  try {
    for (;;) {
      const { done, value } = await iterator.next();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > maxBytes) {
        overflow = true;
        break;
      }
    }
  } finally {
    // Stop the producer: cancels a web stream, destroys a Node stream.
    if (overflow) await iterator.return?.(undefined).catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(size, maxBytes));
  let at = 0;
  for (const c of chunks) {
    if (at >= bytes.length) break;
    const part = c.subarray(0, bytes.length - at);
    bytes.set(part, at);
    at += part.byteLength;
  }
  return { bytes, overflow };
}

function iterate(source: ByteSource): AsyncIterator<Uint8Array> {
  if ('getReader' in source) {
    const reader = source.getReader();
    return {
      next: () => reader.read() as Promise<IteratorResult<Uint8Array>>,
      return: async () => {
        await reader.cancel();
        return { done: true, value: undefined };
      },
    };
  }
  return source[Symbol.asyncIterator]();
}
