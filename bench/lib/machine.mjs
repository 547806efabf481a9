import { readFileSync } from 'node:fs';
import os from 'node:os';

/** What the numbers came from: they mean little without it. */
export function describeMachine() {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) cpuModel = line.split(':').slice(1).join(':').trim();
  } catch {}
  return {
    nproc: os.availableParallelism(),
    cpuModel,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    // Other work on the machine skews everything; the load average at the start tells the reader.
    loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    uvThreadpoolSize: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
  };
}
