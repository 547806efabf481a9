import { Agent, request, errors as undiciErrors } from 'undici';
import type { AttemptErrorKind } from '../model.js';

/** One HTTP POST the engine wants sent. */
export interface TransportRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Total deadline for the whole exchange, headers and body. */
  timeoutMs: number;
}

/** Any HTTP answer, whatever its status (only 200 counts as delivered; the engine decides). */
export interface TransportResponse {
  status: number;
  /** First bytes of the body as text, at most `maxResponseBytes`; the rest is discarded unread. */
  excerpt: string;
}

/**
 * Sends webhook requests. The default is {@link httpTransport}; tests and hosts may pass their
 * own. A transport resolves with any HTTP response and rejects with a {@link TransportError} for
 * everything else (timeout, refused connection, DNS failure, blocked address).
 */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  close?(): Promise<void>;
}

export class TransportError extends Error {
  constructor(readonly kind: AttemptErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

export interface HttpTransportOptions {
  /** Bytes of response body kept for the attempt log. Default 4096. */
  maxResponseBytes?: number;
  /** Connections kept per origin. Default 8. */
  connectionsPerOrigin?: number;
}

/**
 * The default transport: undici with keep-alive, no redirects followed (a 3xx is just a failed
 * attempt), a total deadline, and a bounded read of the response.
 */
export function httpTransport(options: HttpTransportOptions = {}): Transport {
  const maxBytes = options.maxResponseBytes ?? 4096;
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? 8,
    keepAliveTimeout: 10_000,
    connect: { timeout: 10_000 },
  });
  return {
    async send(req) {
      const signal = AbortSignal.timeout(req.timeoutMs);
      try {
        const res = await request(req.url, {
          method: 'POST',
          headers: req.headers,
          body: req.body,
          dispatcher: agent,
          signal,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.timeoutMs,
        });
        const excerpt = await readBounded(res.body, maxBytes);
        return { status: res.statusCode, excerpt };
      } catch (error) {
        throw classify(error, signal, req.timeoutMs);
      }
    },
    async close() {
      await agent.close();
    },
  };
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

function classify(error: unknown, signal: AbortSignal, timeoutMs: number): TransportError {
  if (error instanceof TransportError) return error;
  const code = (error as { code?: string })?.code ?? '';
  if (
    signal.aborted ||
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new TransportError('timeout', `no complete answer within ${timeoutMs} ms`, { cause: error });
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new TransportError('dns', `could not resolve host (${code})`, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError('network', code ? `${code}: ${message}` : message, { cause: error });
}
