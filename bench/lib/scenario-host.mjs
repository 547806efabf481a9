// Entry point of a scenario process: imports the scenario module named on the command line,
// runs its default export with the config sent over IPC, sends back the result, exits.
import { pathToFileURL } from 'node:url';

process.once('message', async ({ config }) => {
  // Alive while the scenario runs, as a host's process is (a server, a pool): Node otherwise
  // exits as soon as nothing but unref'd handles is left, and a scenario whose engine was
  // closing then vanished with 'exited (0) without a result' (1 in 12 quick SQLite runs on
  // 2026-11-25: the engine's scheduler already closed, the rest of close() pending). A real
  // hang still ends: runChild kills the process at its deadline and reports it.
  const alive = setInterval(() => {}, 60_000);
  try {
    const mod = await import(pathToFileURL(process.argv[2]).href);
    const result = await mod.default(config);
    if (process.env.IW_BENCH_TELEMETRY === '1') {
      const { flushTelemetry } = await import('./telemetry.mjs');
      result.notes = { ...result.notes, telemetry: await flushTelemetry() };
    }
    process.send({ result }, () => process.exit(0));
  } catch (error) {
    process.send({ error: error?.stack ?? String(error) }, () => process.exit(1));
  } finally {
    clearInterval(alive);
  }
});
