import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` (a request line and headers, CRLF-separated, without the blank line) over a raw
 * socket, so a test can send what fetch and node:http refuse to (a Host of `a b`, TRACE), and
 * reads the answer until the server closes (`connection: close` is added).
 */
export function rawRequest(port: number, head: string, body = ''): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [top = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = top.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      const raw = rest.join('\r\n\r\n');
      const body = headers['transfer-encoding'] === 'chunked' ? dechunk(raw) : raw;
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
      socket.destroy();
    });
    socket.write(`${head}\r\nconnection: close\r\n\r\n${body}`);
  });
}

function dechunk(raw: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const end = raw.indexOf('\r\n', at);
    const size = Number.parseInt(raw.slice(at, end), 16);
    if (!(size > 0)) return out;
    out += raw.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
}
