import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { holdingExit } from '../../src/better-auth/exit-hold.js';

// The process's real exit is never called here: a stand-in plays it, and must be what is left.
const real = process.exit;
let exit: ReturnType<typeof vi.fn>;
beforeEach(() => {
  exit = vi.fn();
  process.exit = exit as unknown as typeof process.exit;
});
afterEach(() => {
  process.exit = real;
});

function deferred() {
  let settle!: (ok: boolean) => void;
  const promise = new Promise<string>((resolve, reject) => {
    settle = (ok) => (ok ? resolve('started') : reject(new Error('no start')));
  });
  return { promise, settle };
}

test('an exit asked for while the engine starts happens once the start is done, with its code', async () => {
  const start = deferred();
  const held = holdingExit(start.promise);
  process.exit(3);
  await Promise.resolve();
  expect(exit).not.toHaveBeenCalled();
  start.settle(true);
  await expect(held).resolves.toBe('started');
  expect(exit).toHaveBeenCalledExactlyOnceWith(3);
  expect(process.exit).toBe(exit);
});

test('two starts at once: the exit waits for both; a failed start still lets it go', async () => {
  const [a, b] = [deferred(), deferred()];
  const [heldA, heldB] = [holdingExit(a.promise), holdingExit(b.promise)];
  process.exit(0);
  a.settle(true);
  await heldA;
  expect(exit).not.toHaveBeenCalled();
  b.settle(false);
  await expect(heldB).rejects.toThrow('no start');
  expect(exit).toHaveBeenCalledExactlyOnceWith(0);
  expect(process.exit).toBe(exit);
});

test('with no exit asked for, nothing exits and process.exit is given back', async () => {
  await holdingExit(Promise.resolve(1));
  expect(exit).not.toHaveBeenCalled();
  expect(process.exit).toBe(exit);
});
