import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Responder = (
  req: ReceivedRequest,
  index: number,
) => number | { status: number; body?: string; delayMs?: number; headers?: Record<string, string> };

/** A real HTTP receiver on 127.0.0.1 that records every request and answers as told (default 200). */
export async function startReceiver(respond: Responder = () => 200) {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(rec);
      const answer = respond(rec, requests.length - 1);
      const a = typeof answer === 'number' ? { status: answer } : answer;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
        res.end(a.body ?? (a.status === 200 ? 'ok' : `status ${a.status}`));
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
      for (const w of [...waiters])
        if (requests.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    /** Resolves once `n` requests have arrived (or rejects after `timeoutMs` of real time). */
    waitFor(n: number, timeoutMs = 10_000): Promise<void> {
      if (requests.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`receiver got ${requests.length} of ${n} requests`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Serves a web-standard handler over real HTTP on 127.0.0.1. */
export async function serveHandler(handler: (request: Request) => Promise<Response>) {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** A fresh directory for SQLite files; `cleanup()` removes it. */
export function tempDir(prefix = 'iw-test-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, file: (name: string) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A port on 127.0.0.1 where nothing listens (bound, then released: connections are refused). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
