import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from './body.js';
import { wireError } from './errors.js';

/** The node request, plus what Express adds (`originalUrl` before mounting, `body` if parsed). */
type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

export interface NodeHandlerOptions {
  /**
   * Told about every 500 the glue answers itself and every response it has to cut off (the
   * handler logs its own). Default: `console.error` with an `[identity-webhooks]` prefix.
   */
  onError?(message: string, error: unknown): void;
}

/**
 * How much of a refused body we read and discard before answering. A client that is still
 * uploading when the server answers and closes gets a TCP reset instead of the 413; reading the
 * rest first lets it finish and read the answer. Past this, we answer and close the connection.
 */
const DRAIN_LIMIT_BYTES = 16 * MAX_BODY_BYTES;

/** Methods a web `Request` cannot carry (`new Request` throws on them), so no handler ever sees them. */
const UNCARRIED_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * A Host header as RFC 9110 has it: an IP literal or a name, then an optional port. No user info,
 * path, space or other text the URL parser would read as something else (`u@a` is host `a`).
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::[0-9]*)?$/;

/**
 * Adapts a web-standard handler (such as `hooks.handler`) to Node's `(req, res)`: usable with
 * `http.createServer`, as Express middleware, or from a Fastify route after `reply.hijack()`.
 * The body is streamed, not buffered, so the handler's size limit holds. Mount it before any
 * body parser; if one already ran, its result is passed on as JSON.
 *
 * A request the handler cannot be given is answered here, in the management API's error shape: a
 * malformed Host header or request target is 400; CONNECT, TRACE and TRACK are 405 with the
 * `Allow` the handler gives for that path.
 *
 * @example
 * ```ts
 * http.createServer(toNodeHandler(hooks.handler)).listen(3000);
 * app.use('/auth', toNodeHandler(hooks.handler, { onError: (message, error) => log.error({ error }, message) })); // Express
 * ```
 */
export function toNodeHandler(handler: (request: Request) => Promise<Response>, options: NodeHandlerOptions = {}) {
  const onError = options.onError ?? ((message: string, error: unknown) => console.error(`[identity-webhooks] ${message}`, error));
  if (typeof onError !== 'function') throw new TypeError('toNodeHandler: onError must be a function');
  return async (req: NodeRequest, res: ServerResponse): Promise<void> => {
    let body: ReturnType<typeof bodyOf> | undefined;
    try {
      const url = requestUrl(req);
      const method = req.method ?? 'GET';
      let response: Response;
      if (typeof url === 'string')
        response = wireError(400, url === 'host' ? 'INVALID_HOST' : 'INVALID_REQUEST_TARGET', `malformed ${url}`);
      else if (UNCARRIED_METHODS.has(method)) response = await uncarriedMethod(handler, url, method);
      else {
        body = bodyOf(req);
        response = await handler(toRequest(req, url, method, body));
      }
      if (!req.complete) {
        body?.detach?.();
        if (!(await drain(req, DRAIN_LIMIT_BYTES))) res.setHeader('connection', 'close');
      }
      res.statusCode = response.status;
      response.headers.forEach((value, key) => {
        res.setHeader(key, value);
      });
      res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
    } catch (error) {
      // The handler answers every failure itself; this is a broken socket or a host bug in the
      // glue, so answer as plainly as possible and never with details, but tell the operator.
      if (!res.headersSent) {
        onError(`${req.method} ${String(req.url).slice(0, 200)} failed in the Node glue; answered 500`, error);
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ code: 'INTERNAL_ERROR', message: 'internal error' }] }));
      } else {
        onError(`${req.method} ${String(req.url).slice(0, 200)} failed after its headers were sent; the connection was dropped`, error);
        res.destroy();
      }
    }
  };
}

/** The request's URL, or which part of the request line is malformed (`'host'`, `'request target'`). */
function requestUrl(req: NodeRequest): URL | 'host' | 'request target' {
  const host = req.headers.host ?? 'localhost'; // HTTP/1.0 may omit it; Node refuses HTTP/1.1 without one
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  if (!HOST.test(host) || !URL.canParse(`${scheme}://${host}/`)) return 'host';
  // Express strips its mount path from `url`; `originalUrl` keeps it. An origin-form target is
  // appended, never resolved: resolving `//other/x` against the base would make `other` the host.
  const target = req.originalUrl ?? req.url ?? '/';
  const text = target.startsWith('/') ? `${scheme}://${host}${target}` : target;
  return URL.canParse(text, `${scheme}://${host}/`) ? new URL(text, `${scheme}://${host}/`) : 'request target';
}

/**
 * CONNECT, TRACE or TRACK: the glue does not know the routes, the handler does. Asked with OPTIONS
 * (which no route takes), our handlers answer 404 for an unknown path or 405 with the path's Allow.
 */
async function uncarriedMethod(handler: (request: Request) => Promise<Response>, url: URL, method: string): Promise<Response> {
  const probe = await handler(new Request(url, { method: 'OPTIONS' }));
  if (probe.status === 404) return probe;
  await probe.body?.cancel();
  const allow = probe.headers.get('allow') ?? '';
  return wireError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed here (allowed: ${allow || 'none known'})`, { allow });
}

function toRequest(req: NodeRequest, url: URL, method: string, body: { init: BodyInit | null }): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (key.startsWith(':')) continue; // HTTP/2 pseudo-headers
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(key, v);
  }
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
