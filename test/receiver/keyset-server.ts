import type { AddressInfo } from 'node:net';
import net from 'node:net';

/**
 * A key set server on 127.0.0.1 speaking raw HTTP/1.1 over node:net, so a test controls exactly
 * what it claims (content-length) and what it sends (possibly without end). It writes only when
 * the socket drains, so `sent` is what the client actually took in, plus the kernel's buffers.
 */
export async function rawKeySetServer(answer: { head: string; chunk?: string; endless?: boolean; body?: string }) {
  const stats = { connections: 0, requests: 0, sent: 0, closed: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    stats.connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      stats.closed++;
      sockets.delete(socket);
    });
    let request = '';
    socket.on('data', (data) => {
      if (request.includes('\r\n\r\n')) return;
      request += data.toString('latin1');
      if (!request.includes('\r\n\r\n')) return;
      stats.requests++;
      socket.write(answer.head);
      if (answer.body !== undefined) socket.end(answer.body);
      if (!answer.endless) return;
      const chunk = Buffer.from(answer.chunk ?? ' '.repeat(16 * 1024));
      const pump = () => {
        while (!socket.destroyed && socket.writable) {
          stats.sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
