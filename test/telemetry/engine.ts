import { afterAll, beforeAll } from 'vitest';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { startReceiver } from '../helpers/http.js';
import { testSdk, useContextManager } from './sdk.js';

/**
 * For one test file: the host's context manager, and `setup()` making an engine with the SDK's
 * providers and a receiver on 127.0.0.1 answering 200 on /ok and 500 elsewhere, all closed after
 * each test.
 */
export function useTelemetryEngines() {
  const cleanups = useCleanups();
  let stopContext: () => void;
  beforeAll(() => {
    stopContext = useContextManager();
  });
  afterAll(() => stopContext());
  return {
    cleanups,
    async setup(overrides: Parameters<typeof makeEngine>[0] = {}) {
      const sdk = testSdk();
      const receiver = await startReceiver((req) => (req.path.startsWith('/ok') ? 200 : 500));
      const env = await makeEngine({ telemetry: sdk.telemetry, ...overrides });
      cleanups.push(
        () => sdk.shutdown(),
        () => receiver.close(),
        () => env.close(),
      );
      return { sdk, receiver, ...env };
    },
  };
}
