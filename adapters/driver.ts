import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a database driver when its adapter is first used, not when the package is imported: a
 * host on PostgreSQL never compiles SQLite, a receiver-only install needs neither. A missing
 * driver is an error that names the package to install.
 */
export function loadDriver<T>(name: 'pg' | 'better-sqlite3', by: string): T {
  try {
    return require(name) as T;
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${name}'`)) {
      throw new Error(`${by} needs the "${name}" package, which is not installed: run \`npm install ${name}\``, { cause: error });
    }
    throw error;
  }
}
