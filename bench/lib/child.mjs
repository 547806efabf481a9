import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HOST = fileURLToPath(new URL('./scenario-host.mjs', import.meta.url));

/**
 * Runs one scenario module in a fresh Node process (its own heap, threadpool and RSS, so no
 * scenario inherits another's warm caches or garbage), and resolves with what it reports.
 * The child is killed if it outlives `timeoutMs`: every bench step stops by itself.
 */
export function runScenario(modulePath, config, { timeoutMs, env = {} } = {}) {
  return runChild(HOST, [modulePath], config, { timeoutMs, env });
}

/** Forks `file` with IPC, sends it `config`, resolves with its `{ result }` or rejects with its `{ error }`. */
export function runChild(file, args, config, { timeoutMs = 120_000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(file, args, {
      execArgv: profiling(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let settled = false;
    const finish = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(value);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(reject, new Error(`${args[0] ?? file} did not finish within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    child.on('message', (m) => {
      if (m && 'result' in m) finish(resolve, m.result);
      else if (m && 'error' in m) finish(reject, new Error(m.error));
    });
    child.on('error', (e) => finish(reject, e));
    child.on('exit', (code, signal) => finish(reject, new Error(`${args[0] ?? file} exited (${signal ?? code}) without a result`)));
    child.send({ config });
  });
}

/**
 * `BENCH_CPU_PROF=DIR`: every child writes a V8 CPU profile into DIR (NODE_OPTIONS may not carry
 * `--cpu-prof`). A profiled run is slower and its samples count time the main thread lost to the
 * signing threads on a small machine: read proportions, not milliseconds.
 */
function profiling() {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? [...process.execArgv, '--cpu-prof', `--cpu-prof-dir=${dir}`] : undefined;
}
