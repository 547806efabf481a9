import net, { type AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** One message as the SMTP server received it: the envelope, the raw bytes, and the decoded parts. */
export interface ReceivedMail {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO), in order. */
  to: string[];
  /** The message exactly as transferred (dot-stuffing undone), as UTF-8 text. */
  raw: string;
  /** Header fields, names lower-cased, values unfolded but not decoded; a line without a colon lands under `''`. */
  headers: Map<string, string[]>;
  /** The first value of a header, RFC 2047 encoded-words decoded. */
  header(name: string): string | undefined;
  /** The Subject, decoded. */
  subject: string | undefined;
  /** The first text/plain part, decoded (transfer encoding and charset), line ends as `\n`. */
  text: string | undefined;
  /** The first text/html part, decoded, line ends as `\n`. */
  html: string | undefined;
  /** Every leaf part: content type (lower case, no parameters), its headers and decoded body. */
  parts: Array<{ contentType: string; headers: Map<string, string[]>; body: string }>;
}

export interface SmtpServerOptions {
  /** Recipients answered `550 mailbox unavailable` (compared case-insensitively). */
  rejectRecipients?: Iterable<string>;
  /** Require this login (PLAIN/LOGIN over the plain connection); wrong credentials get 535. */
  auth?: { user: string; pass: string };
}

/**
 * A real SMTP server on 127.0.0.1 (no TLS) that keeps every message it accepts. It can go down
 * (`stop()`) and come back on the same port (`start()`), for "mail server down at the disable,
 * back later" tests.
 *
 * @example
 * ```ts
 * const smtp = await startSmtpServer({ rejectRecipients: ['nobody@acme.example'] });
 * const notifier = smtpNotifier({ url: smtp.url, from: 'a@acme.example', to: () => 'holder@acme.example' });
 * await notifier.webhookDisabled(info);
 * await smtp.waitFor(1);
 * expect(smtp.messages[0]!.subject).toBe('Webhook "CRM" was disabled');
 * await smtp.close();
 * ```
 */
export async function startSmtpServer(options: SmtpServerOptions = {}) {
  const messages: ReceivedMail[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  /** Mutable: add or remove addresses while the server runs. */
  const rejected = new Set([...(options.rejectRecipients ?? [])].map((a) => a.toLowerCase()));
  let sessions = 0;
  let server: SMTPServer | null = null;
  let port = 0;

  const config: SMTPServerOptions = {
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: options.auth === undefined,
    logger: false,
    // stop() means down now: open sessions get 421 at once, as from a server going away.
    closeTimeout: 50,
    onConnect(_session, callback) {
      sessions++;
      callback();
    },
    onAuth(auth, _session, callback) {
      const want = options.auth;
      if (want && (auth.username !== want.user || auth.password !== want.pass)) {
        return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      }
      callback(null, { user: auth.username ?? 'anonymous' });
    },
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase())) {
        return callback(Object.assign(new Error(`<${address.address}>: mailbox unavailable`), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const mailFrom = session.envelope.mailFrom;
        messages.push(
          parseMail(bytes, {
            from: mailFrom ? mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          }),
        );
        for (const w of [...waiters]) {
          if (messages.length >= w.n) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        callback();
      });
    },
  };

  const start = async () => {
    if (server) return;
    const s = new SMTPServer(config);
    s.on('error', () => {}); // a client dropping mid-session is not the test's failure
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.server.off('error', reject);
        resolve();
      });
    });
    port = (s.server.address() as AddressInfo).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    if (!s) return;
    server = null;
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await start();
  return {
    host: '127.0.0.1',
    port,
    /** `smtp://127.0.0.1:<port>` (add `user:pass@` yourself when the server requires auth). */
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejected,
    /** How many SMTP sessions were opened, over every start. */
    get sessions() {
      return sessions;
    },
    get running() {
      return server !== null;
    },
    /** Resolves once `n` messages have arrived (or rejects after `timeoutMs` of real time). */
    waitFor(n: number, timeoutMs = 10_000): Promise<void> {
      if (messages.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`SMTP server got ${messages.length} of ${n} messages`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
    /** Goes down: the port refuses connections, open sessions are ended. */
    stop,
    /** Comes back on the same port. */
    start,
    close: stop,
    [Symbol.asyncDispose]: stop,
  };
}

export type SmtpTestServer = Awaited<ReturnType<typeof startSmtpServer>>;

export { closedPort } from './http.js';

/** A TCP server on 127.0.0.1 that accepts connections and never says a word (a hung mail server). */
export async function startSilentServer() {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    get connections() {
      return sockets.size;
    },
    close: () => new Promise<void>((r) => (sockets.forEach((c) => c.destroy()), s.close(() => r()))),
  };
}

// ---- A small MIME reader: enough for what nodemailer writes, strict enough to notice a broken header.

type HeaderMap = Map<string, string[]>;

/** Parses a message: headers (unfolded), RFC 2047 subject, and its parts (multipart/* nested, QP/base64, charsets). */
export function parseMail(bytes: Buffer | string, envelope: { from: string; to: string[] }): ReceivedMail {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  // Read bytes as latin1 so every byte survives until we know the charset.
  const { headers, body } = splitEntity(buf.toString('latin1'));
  const parts: ReceivedMail['parts'] = [];
  collectParts(headers, body, parts);
  const header = (name: string) => {
    const v = headers.get(name.toLowerCase())?.[0];
    return v === undefined ? undefined : decodeWords(v);
  };
  return {
    from: envelope.from,
    to: envelope.to,
    raw: buf.toString('utf8'),
    headers,
    header,
    subject: header('subject'),
    text: parts.find((p) => p.contentType === 'text/plain')?.body,
    html: parts.find((p) => p.contentType === 'text/html')?.body,
    parts,
  };
}

function splitEntity(s: string): { headers: HeaderMap; body: string } {
  const m = /\r?\n\r?\n/.exec(s);
  const head = m ? s.slice(0, m.index) : s;
  const body = m ? s.slice(m.index + m[0].length) : '';
  const headers: HeaderMap = new Map();
  // Unfolding (RFC 5322 2.2.3): a line break followed by white space is not a new field.
  for (const line of head.replace(/\r?\n(?=[ \t])/g, '').split(/\r?\n/)) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 && !/\s/.test(line.slice(0, colon)) ? line.slice(0, colon).toLowerCase() : '';
    const value = Buffer.from(name ? line.slice(colon + 1).trim() : line, 'latin1').toString('utf8');
    headers.set(name, [...(headers.get(name) ?? []), value]);
  }
  return { headers, body };
}

function collectParts(headers: HeaderMap, body: string, out: ReceivedMail['parts']): void {
  const type = headers.get('content-type')?.[0] ?? 'text/plain; charset=us-ascii';
  const mime = type.split(';')[0]!.trim().toLowerCase();
  if (mime.startsWith('multipart/')) {
    const boundary = param(type, 'boundary');
    if (!boundary) throw new Error(`multipart without a boundary: ${type}`);
    const pieces = `\r\n${body}`.split(new RegExp(`\\r?\\n--${escapeRegExp(boundary)}`));
    for (const piece of pieces.slice(1)) {
      if (piece.startsWith('--')) break; // the close delimiter
      const entity = piece.slice(piece.search(/\r?\n/) + (piece.match(/\r?\n/)?.[0].length ?? 0));
      const child = splitEntity(entity);
      collectParts(child.headers, child.body, out);
    }
    return;
  }
  const encoding = (headers.get('content-transfer-encoding')?.[0] ?? '7bit').trim().toLowerCase();
  const charset = param(type, 'charset') ?? 'us-ascii';
  const decoded = decodeText(transferDecode(body, encoding), charset);
  // Mail travels with CRLF line ends; tests compare against text written with \n.
  out.push({ contentType: mime, headers, body: mime.startsWith('text/') ? decoded.replace(/\r\n/g, '\n') : decoded });
}

function transferDecode(body: string, encoding: string): Buffer {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64');
  if (encoding === 'quoted-printable') {
    const joined = body.replace(/[ \t]+(?=\r?\n)/g, '').replace(/=\r?\n/g, ''); // trailing blanks, then soft breaks
    return Buffer.from(
      joined.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      'latin1',
    );
  }
  return Buffer.from(body, 'latin1');
}

function decodeText(bytes: Buffer, charset: string): string {
  const cs = charset.toLowerCase() === 'us-ascii' ? 'utf-8' : charset;
  return new TextDecoder(cs).decode(bytes);
}

/** RFC 2047: `=?utf-8?Q?...?=` / `=?utf-8?B?...?=`, white space between adjacent encoded-words dropped. */
export function decodeWords(value: string): string {
  const WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;
  let out = '';
  let last = 0;
  let pending: { charset: string; bytes: Buffer[] } | null = null;
  const flush = () => {
    if (pending) out += decodeText(Buffer.concat(pending.bytes), pending.charset);
    pending = null;
  };
  for (let m = WORD.exec(value); m; m = WORD.exec(value)) {
    const between = value.slice(last, m.index);
    if (!(pending && /^\s*$/.test(between))) {
      flush();
      out += between;
    }
    const charset = m[1]!.split('*')[0]!;
    const text = m[3]!;
    const bytes =
      m[2]!.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
            'latin1',
          );
    // Adjacent words of one charset are joined as bytes: an encoder may split a character between them.
    if ((pending as { charset: string } | null)?.charset.toLowerCase() !== charset.toLowerCase()) {
      flush();
      pending = { charset, bytes: [] };
    }
    pending!.bytes.push(bytes);
    last = m.index + m[0].length;
  }
  flush();
  return out + value.slice(last);
}

function param(header: string, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]+))`, 'i').exec(header);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
