// An engine process with nothing due: started with default options on the store at `location`,
// left alone for `windowMs` after settling. Reports its CPU use over the window and its RSS.
import { makeEngine } from '../lib/engine.mjs';
import { sleep } from '../lib/stats.mjs';
import { openStore } from '../lib/stores.mjs';

process.once('message', async ({ config: { location, windowMs, settleMs } }) => {
  try {
    const store = await openStore({ kind: location.kind, dir: location.dir, pgUrl: location.pgUrl });
    const hooks = await makeEngine({ store });
    await hooks.start();
    await hooks.drain();
    await sleep(settleMs); // past start-up: the first poll ticks, allocations settle
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(windowMs);
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    const rssMB = process.memoryUsage().rss / 2 ** 20;
    await hooks.close();
    process.send({ result: { rssMB, cpuPct: ((cpu.user + cpu.system) / 1e6 / seconds) * 100 } }, () => process.exit(0));
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) }, () => process.exit(1));
  }
});
