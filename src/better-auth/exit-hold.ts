/**
 * better-auth starts its plugins as soon as `betterAuth()` is called, so a tool that only loads
 * the host's config and then exits (`npx @better-auth/cli migrate`) would stop the engine's own
 * migrations half-way: its tables partly made, the rest left for the next start. While the
 * plugin starts the engine, `process.exit` is held: an exit asked for meanwhile happens once the
 * start has settled, or after {@link HOLD_MAX_MS} if it hangs.
 */

/** Longest an asked-for exit waits for the engine's start. */
export const HOLD_MAX_MS = 30_000;

const starting = new Set<Promise<unknown>>();
let exit: typeof process.exit | undefined;
let asked: { code: Parameters<typeof process.exit>[0] } | undefined;
let deadline: ReturnType<typeof setTimeout> | undefined;

const held = ((code?: Parameters<typeof process.exit>[0]) => {
  asked ??= { code };
  deadline ??= setTimeout(release, HOLD_MAX_MS);
  return undefined as never;
}) as typeof process.exit;

/** Puts `process.exit` back, and exits now if an exit was asked for. */
function release(): void {
  const real = exit;
  if (real === undefined) return;
  if (process.exit === held) process.exit = real;
  exit = undefined;
  clearTimeout(deadline);
  deadline = undefined;
  starting.clear();
  const wanted = asked;
  asked = undefined;
  if (wanted) real(wanted.code);
}

/** Resolves as `work` does, with `process.exit` held until it (and any other start in progress) settles. */
export async function holdingExit<T>(work: Promise<T>): Promise<T> {
  if (exit === undefined && process.exit !== held) {
    exit = process.exit;
    process.exit = held;
  }
  starting.add(work);
  try {
    return await work;
  } finally {
    starting.delete(work);
    if (starting.size === 0) release();
  }
}
