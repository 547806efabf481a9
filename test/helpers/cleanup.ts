import { afterEach } from 'vitest';

export type Cleanup = () => unknown;

/**
 * What a test opened (engines, servers, temp dirs), released after each test, last in first out.
 * Call once at the top of a test file: `const cleanups = useCleanups();` then `cleanups.push(...)`.
 */
export function useCleanups(): Cleanup[] {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  return cleanups;
}

/** Polls `check` every `everyMs` until it returns true, at most `timeoutMs` (then throws, naming `what`). */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000, everyMs = 5): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
