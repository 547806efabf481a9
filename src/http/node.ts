import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from './body.js';

/** The node request, plus what Express adds (`originalUrl` before mounting, `body` if parsed). */
type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

/**
 * How much of a refused body we read and discard before answering. A client that is still
 * uploading when the server answers and closes gets a TCP reset instead of the 413; reading the
 * rest first lets it finish and read the answer. Past this, we answer and close the connection.
 */
const DRAIN_LIMIT_BYTES = 16 * MAX_BODY_BYTES;

/**
 * Adapts a web-standard handler (such as `hooks.handler`) to Node's `(req, res)`: usable with
 * `http.createServer`, as Express middleware, or from a Fastify route after `reply.hijack()`.
 * The body is streamed, not buffered, so the handler's size limit holds. Mount it before any
 * body parser; if one already ran, its result is passed on as JSON.
 *
 * @example
 * ```ts
 * http.createServer(toNodeHandler(hooks.handler)).listen(3000);
 * app.use('/auth', toNodeHandler(hooks.handler)); // Express
 * ```
 */
export function toNodeHandler(handler: (request: Request) => Promise<Response>) {
  return async (req: NodeRequest, res: ServerResponse): Promise<void> => {
    try {
      const body = bodyOf(req);
      const response = await handler(toRequest(req, body));
      if (!req.complete) {
        body.detach?.();
        if (!(await drain(req, DRAIN_LIMIT_BYTES))) res.setHeader('connection', 'close');
      }
      res.statusCode = response.status;
      response.headers.forEach((value, key) => {
        res.setHeader(key, value);
      });
      res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
    } catch {
      // The handler answers every failure itself; this is a broken socket or a host bug in the
      // glue, so answer as plainly as possible and never with details.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ code: 'INTERNAL_ERROR', message: 'internal error' }] }));
      } else {
        res.destroy();
      }
    }
  };
}

function toRequest(req: NodeRequest, body: { init: BodyInit | null }): Request {
  // Express strips its mount path from `url`; `originalUrl` keeps it, so the OpenAPI document
  // shows the address clients actually use.
  const host = req.headers.host ?? 'localhost';
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const url = new URL(req.originalUrl ?? req.url ?? '/', `${scheme}://${host}`);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (key.startsWith(':')) continue; // HTTP/2 pseudo-headers
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(key, v);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  if (typeof body.init === 'string' || body.init instanceof Uint8Array) headers.delete('content-length'); // re-encoded
  return new Request(url, { method, headers, body: body.init, duplex: 'half' } as RequestInit);
}

/**
 * The request body as a web stream that pulls from `req` on demand. Unlike `Readable.toWeb`,
 * cancelling it does not destroy the socket (we still have an answer to send on it).
 */
function bodyOf(req: NodeRequest): { init: BodyInit | null; detach?: () => void } {
  if (req.readableEnded && req.body !== undefined) {
    // A body parser consumed the stream; hand on what it produced.
    if (typeof req.body === 'string') return { init: req.body };
    if (Buffer.isBuffer(req.body)) return { init: new Uint8Array(req.body) };
    return { init: JSON.stringify(req.body) };
  }
  let done = false;
  // biome-ignore lint/suspicious/noExplicitAny: node's listener signature
  const listeners: Array<[string, (...args: any[]) => void]> = [];
  const detach = () => {
    for (const [event, fn] of listeners) req.off(event, fn);
    listeners.length = 0;
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (fn: () => void) => () => {
        if (done) return;
        done = true;
        detach();
        fn();
      };
      req.pause(); // before listening, or adding a 'data' listener starts the flow
      listeners.push(
        [
          'data',
          (chunk: Buffer) => {
            if (done) return;
            controller.enqueue(new Uint8Array(chunk));
            if ((controller.desiredSize ?? 0) <= 0) req.pause();
          },
        ],
        ['end', finish(() => controller.close())],
        ['error', (error: unknown) => finish(() => controller.error(error))()],
      );
      for (const [event, fn] of listeners) req.on(event, fn);
    },
    pull() {
      req.resume();
    },
    cancel() {
      done = true;
      detach();
    },
  });
  return { init: stream, detach };
}

/** Reads and discards the rest of the body; false when it ran past `limit` (or broke). */
function drain(req: IncomingMessage, limit: number): Promise<boolean> {
  if (req.complete || req.destroyed) return Promise.resolve(req.complete);
  return new Promise((resolve) => {
    let seen = 0;
    const stop = (ok: boolean) => () => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(ok);
    };
    const onEnd = stop(true);
    const onError = stop(false);
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) stop(false)();
    };
    req.on('data', onData).on('end', onEnd).on('error', onError);
    req.resume();
  });
}
