import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory for SQLite files, removed by cleanup(). */
export function tempDir(label = 'bench') {
  const path = mkdtempSync(join(tmpdir(), `iw-${label}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
