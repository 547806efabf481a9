// The delivering process of the cross-process pickup scenario: opens the same store, starts the
// scheduler (which listens for wake-ups), says ready, and runs until told to stop.
import { makeEngine } from '../lib/engine.mjs';
import { sleep } from '../lib/stats.mjs';
import { openStore } from '../lib/stores.mjs';

process.once('message', async ({ location }) => {
  try {
    const store = await openStore({ kind: location.kind, dir: location.dir, pgUrl: location.pgUrl });
    const hooks = await makeEngine({ store });
    await hooks.start();
    // Give the listener a moment to be in place: wake-ups sent before LISTEN are not heard.
    await sleep(300);
    process.on('message', async (m) => {
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
