import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** The node request, plus what Express adds (`originalUrl` before mounting, `body` if parsed). */
type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

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
      const response = await handler(toRequest(req));
      res.statusCode = response.status;
      response.headers.forEach((value, key) => res.setHeader(key, value));
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

function toRequest(req: NodeRequest): Request {
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
  return new Request(url, { method, headers, body: bodyOf(req, headers), duplex: 'half' } as RequestInit);
}

function bodyOf(req: NodeRequest, headers: Headers): BodyInit | null {
  if (!req.readableEnded || req.body === undefined) return Readable.toWeb(req) as ReadableStream<Uint8Array>;
  // A body parser consumed the stream; hand on what it produced.
  headers.delete('content-length');
  if (typeof req.body === 'string') return req.body;
  if (Buffer.isBuffer(req.body)) return new Uint8Array(req.body);
  return JSON.stringify(req.body);
}
