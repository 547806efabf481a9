import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const FILE = fileURLToPath(new URL('../receiver.mjs', import.meta.url));

/** Starts the receiver process; resolves with its addresses and a stop(). */
export function startReceiver({ okPorts = 10 } = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(FILE, [], {
      env: { ...process.env, RECEIVER_OK_PORTS: String(okPorts) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error('receiver did not start within 10 s'))), 10_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve({
        urls: m.urls,
        hangUrl: m.hangUrl,
        pid: child.pid,
        stop: () =>
          new Promise((r) => {
            if (child.exitCode !== null) return r();
            child.once('exit', () => r());
            child.send('stop');
            setTimeout(() => child.kill('SIGKILL'), 2000).unref();
          }),
      });
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`receiver exited (${code})`))));
  });
}

/** Talks to a running receiver (from any process) through its control routes. */
export function receiverControl(urls) {
  const base = urls[0];
  return {
    reset: () => fetch(`${base}/_reset`, { method: 'POST' }).then((r) => r.text()),
    stats: () => fetch(`${base}/_stats`).then((r) => r.json()),
    /** Arrival times (CLOCK_MONOTONIC ms) by webhook-id since the last call. */
    stamps: () => fetch(`${base}/_stamps`).then((r) => r.json()),
    /** The time (CLOCK_MONOTONIC ms) of every 200 answered since the last reset, in order. */
    arrivals: () => fetch(`${base}/_arrivals`).then((r) => r.json()),
  };
}
