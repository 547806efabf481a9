// A delivering process of the rate-limit scenario: opens the same store, starts the scheduler,
// says ready, and runs until told to stop (as pickup-worker.mjs).
import { countClaims } from '../lib/claim-stats.mjs';
import { makeEngine } from '../lib/engine.mjs';
import { openStore } from '../lib/stores.mjs';

process.once('message', async ({ location }) => {
  try {
    const store = await openStore(location);
    const stats = process.env.BENCH_CLAIM_STATS ? countClaims(store) : null;
    const hooks = await makeEngine({ store });
    await hooks.start();
    process.on('message', async (m) => {
      if (m === 'wake') hooks.wake();
      if (m === 'snap' && stats)
        console.error(`claim stats (worker ${process.pid}, until the neighbours were done): ${JSON.stringify(stats())}`);
      if (m !== 'stop') return;
      await hooks.close();
      process.exit(0);
    });
    process.send({ ready: true });
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
    process.exit(1);
  }
});
process.on('disconnect', () => process.exit(0));
