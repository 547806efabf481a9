/**
 * Socket failures Node reports the same way for every driver: the connection to the database was
 * lost, refused, or could not be made yet. Each dialect adds its own database's codes.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

export function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : '';
}

export function isSocketError(error: unknown): boolean {
  return SOCKET_CODES.has(errorCode(error));
}
