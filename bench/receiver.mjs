// The webhook receiver of the bench: a separate process, so its CPU competes with the engine's
// for the same cores, as a receiver on the same machine would. Forked with IPC by run.mjs.
//
// It listens on 127.0.0.1 only:
//   - `okPorts` ports answering every POST with 200 (one port per webhook, like separate account holders,
//     so each webhook gets its own connection pool in the sender);
//   - one port that never answers (the timing-out endpoint of the isolation scenario); it drops
//     each socket after 60 s so nothing lingers;
//   - on the first ok port, control routes: GET /_stats (counters), GET /_stamps (arrival times
//     by webhook-id, then forgets them), GET /_arrivals (the time of every 200 since the last
//     reset, in order: what the throughput windows are cut from), POST /_reset.
// Paths: /status/NNN answers NNN; /stamp/... records the arrival time (CLOCK_MONOTONIC, which
// every process of the machine shares) when the request head arrives: the first-byte time.
import http from 'node:http';

const okPorts = Number(process.env.RECEIVER_OK_PORTS ?? 10);
const HANG_LIMIT_MS = 60_000;
const MAX_ARRIVALS = 1_000_000; // a bound, whatever a scenario does without resetting

let stats = freshStats();
let stamps = new Map();
let arrivals = [];

function freshStats() {
  return { requests: 0, ok: 0, other: 0, bytes: 0, tokens: new Set(), okIds: new Set(), byPort: {} };
}

function handle(req, res, port) {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url === '/_stats') {
    const { tokens, okIds, ...rest } = stats;
    return reply(res, 200, JSON.stringify({ ...rest, distinctTokens: tokens.size, distinctOkIds: okIds.size }));
  }
  if (req.method === 'GET' && url === '/_stamps') {
    const body = JSON.stringify(Object.fromEntries(stamps));
    stamps = new Map();
    return reply(res, 200, body);
  }
  if (req.method === 'GET' && url === '/_arrivals') {
    return reply(res, 200, JSON.stringify(arrivals));
  }
  if (req.method === 'POST' && url === '/_reset') {
    stats = freshStats();
    stamps = new Map();
    arrivals = [];
    return reply(res, 200, 'reset');
  }
  const arrived = Number(process.hrtime.bigint()) / 1e6;
  const id = req.headers['webhook-id'];
  if (url.startsWith('/stamp/') && typeof id === 'string') stamps.set(id, arrived);
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    stats.requests++;
    stats.bytes += body.length;
    stats.byPort[port] = (stats.byPort[port] ?? 0) + 1;
    // The signature is the token's last segment: distinct signatures = RSA signatures made.
    const text = body.toString('latin1');
    stats.tokens.add(text.slice(text.lastIndexOf('.') + 1, text.lastIndexOf('.') + 33));
    const m = /^\/status\/(\d{3})/.exec(url);
    const status = m ? Number(m[1]) : 200;
    if (status === 200) {
      stats.ok++;
      // Distinct webhook-ids answered 200: equal to `ok` when no delivery was sent twice.
      if (typeof id === 'string') stats.okIds.add(id);
      // When the request was read in full and is answered (CLOCK_MONOTONIC ms, shared by every
      // process of the machine): a delivery done, as far as the receiver can tell.
      if (arrivals.length < MAX_ARRIVALS) arrivals.push(Math.round((Number(process.hrtime.bigint()) / 1e6) * 1000) / 1000);
    } else stats.other++;
    reply(res, status, status === 200 ? 'ok' : `status ${status}`);
  });
}

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

const servers = [];
const urls = [];
for (let i = 0; i < okPorts; i++) {
  const server = http.createServer();
  server.keepAliveTimeout = 5_000;
  const port = await listen(server);
  server.on('request', (req, res) => handle(req, res, port));
  servers.push(server);
  urls.push(`http://127.0.0.1:${port}`);
}

// Reads the request and then never answers: the sender's own deadline has to end it.
const hang = http.createServer((req, res) => {
  req.resume();
  const t = setTimeout(() => res.destroy(), HANG_LIMIT_MS);
  res.on('close', () => clearTimeout(t));
});
hang.requestTimeout = 0;
hang.headersTimeout = 0;
const hangPort = await listen(hang);
servers.push(hang);

process.send?.({ ready: true, urls, hangUrl: `http://127.0.0.1:${hangPort}` });

// The bench owns this process: when it goes away (or says stop), so do we.
const stop = () => {
  for (const s of servers) s.closeAllConnections?.();
  process.exit(0);
};
process.on('disconnect', stop);
process.on('message', (m) => m === 'stop' && stop());
