import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { WebhooksError } from '../errors.js';
import { CheckMemo, checkTarget } from './guard/check.js';
import { createGuard, DEFAULT_GUARD, type Guard, type GuardOptions } from './guard/guard.js';
import { AddressPins } from './guard/pins.js';
import { TransportError } from './transport-error.js';

export { TransportError } from './transport-error.js';

/** One HTTP POST the engine wants sent. */
export interface TransportRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Total deadline for the whole exchange: DNS, connect, headers and body. */
  timeoutMs: number;
  /**
   * The SSRF guard for this request; the engine passes the one built from its options, so a
   * wrapper that forwards the request unchanged keeps it. Absent: the transport's own guard.
   */
  guard?: Guard;
  /**
   * mTLS: the client certificate to present, on a connection pool of its own (one per
   * `pool`, made again when `version` changes). Absent: the shared pool, no certificate.
   */
  clientCertificate?: ClientCertificate;
  /** Bytes of the answer to read, when it is more than the transport keeps for the log (an OAuth2 token answer). */
  maxResponseBytes?: number;
}

/** A TLS client certificate and the pool it is presented on (see {@link TransportRequest.clientCertificate}). */
export interface ClientCertificate {
  /** The pool's name: the webhook's id. */
  pool: string;
  /** Changes when the certificate does (the sealed key's text): the old pool is closed. */
  version: string;
  /** PEM certificate (chain), PEM private key, and the PEM CAs to trust for the server (default: the system's). */
  cert: string;
  key: string;
  ca?: string | null;
}

/** Any HTTP answer, whatever its status (only 200 counts as delivered; the engine decides). */
export interface TransportResponse {
  status: number;
  /** First bytes of the body as text, at most `maxResponseBytes`; the rest is discarded unread. */
  excerpt: string;
  /** The `Retry-After` header of a 429 or 503, as sent (the engine defers the webhook by it). */
  wait?: string;
}

/**
 * Sends webhook requests. The default is {@link httpTransport}; tests and hosts may pass their
 * own. A transport resolves with any HTTP response and rejects with a {@link TransportError} for
 * everything else (timeout, refused connection, DNS failure, blocked address). A transport of
 * your own must apply `request.guard` itself (see `checkEndpoint`), or it has no SSRF guard.
 */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  close?(): Promise<void>;
}

/** `connectionsPerOrigin` when not given: the engine's default `delivery.concurrency`. */
const DEFAULT_CONNECTIONS_PER_ORIGIN = 64;

export interface HttpTransportOptions {
  /** Bytes of response body kept for the attempt log. Default 4096. */
  maxResponseBytes?: number;
  /**
   * Connections kept per origin. Default 64: the engine's default `delivery.concurrency`, so that
   * every slot can reach one origin at once and environments whose endpoints share a server never
   * queue for a connection behind a path that hangs there (the engine builds its own transport with
   * as many as its slots). Set it to your `delivery.concurrency` when you change that; fewer brings
   * the shared-host stall back.
   */
  connectionsPerOrigin?: number;
  /** The guard for requests that carry none. Default: public addresses only, system DNS. */
  guard?: GuardOptions;
}

/**
 * The default transport: undici with keep-alive, the guard with DNS pinning, no
 * redirects followed (a 3xx is just a failed attempt), one total deadline, and a bounded read of
 * the response.
 *
 * @example
 * ```ts
 * const hooks = createWebhooks({ ...options, transport: httpTransport({ maxResponseBytes: 1024 }) });
 * ```
 */
export function httpTransport(options: HttpTransportOptions = {}): Transport {
  const maxBytes = options.maxResponseBytes ?? 4096;
  const guardOptions = options.guard;
  const fallback = guardOptions === undefined ? DEFAULT_GUARD : createGuard(guardOptions, 'httpTransport');
  const pins = new AddressPins(fallback);
  const checked = new CheckMemo();
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: 10_000,
    // Every new connection to a named host dials what the guard checked (see AddressPins).
    connect: { timeout: 10_000, lookup: pins.lookup },
  });
  // mTLS: a pool per webhook that presents a client certificate, with the same pins.
  const certified = new Map<string, { version: string; agent: Agent }>();
  const agentFor = (c: ClientCertificate | undefined): Agent => {
    if (c === undefined) return agent;
    const had = certified.get(c.pool);
    if (had?.version === c.version) return had.agent;
    if (had) void had.agent.close().catch(() => {});
    const tls: { cert: string; key: string; ca?: string } = { cert: c.cert, key: c.key };
    if (c.ca) tls.ca = c.ca;
    const own = new Agent({
      connections: options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
      keepAliveTimeout: 10_000,
      connect: { timeout: 10_000, lookup: pins.lookup, ...tls },
    });
    certified.set(c.pool, { version: c.version, agent: own });
    return own;
  };
  return {
    async send(req) {
      // One deadline covers the guard's DNS lookup too: a slow resolver is a timeout, not a hang.
      const deadline = new Deadline(req.timeoutMs);
      try {
        const target = await checkTarget(req.url, req.guard ?? fallback, () => deadline.signal, checked);
        if (!target.literal) pins.set(target.host, target.addresses);
        return await exchange(agentFor(req.clientCertificate), target.url, req, deadline, req.maxResponseBytes ?? maxBytes);
      } catch (error) {
        throw classify(error, deadline.expired, req.timeoutMs);
      } finally {
        deadline.clear();
      }
    },
    async close() {
      await Promise.all([...certified.values()].map((c) => c.agent.close()));
      await agent.close();
    },
  };
}

/**
 * The deadline of one request: a plain timer. An AbortSignal is built only when something asks
 * for one (the guard's DNS lookup of a name); the HTTP exchange is aborted through its dispatch
 * controller. `AbortSignal.timeout` and undici's abort listeners cost about a third of what the
 * whole exchange costs over loopback.
 */
class Deadline {
  expired = false;
  #timer: ReturnType<typeof setTimeout>;
  #controller: AbortController | undefined;
  #onExpire: (() => void) | undefined;

  constructor(ms: number) {
    this.#timer = setTimeout(() => this.#expire(), ms);
    this.#timer.unref();
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.expired && !this.#controller.signal.aborted) this.#controller.abort(timeoutReason());
    return this.#controller.signal;
  }

  /** Runs `fn` when the deadline passes (at once if it has passed). */
  onExpire(fn: () => void): void {
    this.#onExpire = fn;
    if (this.expired) fn();
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#onExpire = undefined;
  }

  #expire(): void {
    this.expired = true;
    this.#controller?.abort(timeoutReason());
    this.#onExpire?.();
  }
}

const timeoutReason = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

/** Ends an exchange whose excerpt is complete: the rest of the body is never read. */
const ENOUGH = new Error('the excerpt is complete; the rest of the body is not read');

/**
 * One POST through undici's dispatch API: the status, and the start of the body (all of it when
 * it is small). Past `maxBytes` the exchange is aborted, so a huge or endless body costs
 * `maxBytes` and that connection. No stream and no AbortSignal per request: this runs for every
 * delivery.
 */
function exchange(agent: Agent, url: URL, req: TransportRequest, deadline: Deadline, maxBytes: number): Promise<TransportResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    let status = 0;
    let wait: string | undefined;
    let size = 0;
    const chunks: Buffer[] = [];
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const complete = () => {
      if (settled) return;
      settled = true;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      const excerpt = clean(bytes.subarray(0, maxBytes).toString('utf8'));
      resolve(wait === undefined ? { status, excerpt } : { status, excerpt, wait });
    };
    deadline.onExpire(() => {
      const reason = timeoutReason();
      // Not started yet (waiting for a connection): it is aborted the moment it starts.
      controller?.abort(reason);
      fail(reason);
    });
    agent.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
        // No redirect interceptor is composed on this agent: a 3xx comes back as is, never
        // followed (a redirect to 127.0.0.1 would otherwise bypass the guard).
      },
      {
        onRequestStart(c) {
          controller = c;
          if (settled) c.abort(timeoutReason());
        },
        onResponseStart(_c, statusCode, headers) {
          if (statusCode >= 200) status = statusCode; // 1xx is informational: the answer follows
          if (statusCode === 429 || statusCode === 503) {
            const value = headers['retry-after'];
            wait = Array.isArray(value) ? value[0] : value;
          }
        },
        onResponseData(c, chunk) {
          if (settled) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= maxBytes) {
            complete();
            c.abort(ENOUGH);
          }
        },
        onResponseEnd() {
          complete();
        },
        onResponseError(_c, error) {
          fail(error);
        },
      },
    );
  });
}

/**
 * NUL has no place in a PostgreSQL text column: a receiver answering with one would make the
 * attempt unrecordable (and the delivery attempted again on every lease expiry). Invalid UTF-8
 * already decodes to U+FFFD.
 */
const clean = (text: string) => text.replaceAll('\u0000', '\ufffd');

function classify(error: unknown, expired: boolean, timeoutMs: number): TransportError {
  if (error instanceof TransportError) return error;
  // The guard refused the endpoint: a private address, or a URL no webhook may have.
  if (error instanceof WebhooksError) return new TransportError('blocked', error.message, { cause: error });
  const code = (error as { code?: string })?.code ?? '';
  if (
    expired ||
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
