// Entry point of a scenario process: imports the scenario module named on the command line,
// runs its default export with the config sent over IPC, sends back the result, exits.
import { pathToFileURL } from 'node:url';

process.once('message', async ({ config }) => {
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
  }
});
