import type { AuthorizeResult } from '../types.js';
import { environmentOf } from '../validate.js';
import { HttpError } from './errors.js';

export type Authorize = (request: Request) => AuthorizeResult | Promise<AuthorizeResult>;

const REFUSED = () => new HttpError('INVALID_CREDENTIALS', 'the request is not authorized for this API', { status: 403 });

/**
 * Runs the host's `authorize` hook and returns the caller's environment, failing closed: no hook,
 * a null answer, a malformed answer or a throw all refuse with the same 403, so a caller learns
 * nothing about why. A throw is 403 rather than 500 because hooks typically throw on a malformed
 * token (a caller error); it is still logged, since it may equally be the host's bug or an outage.
 */
export async function authorizeRequest(
  authorize: Authorize | undefined,
  request: Request,
  onError: (message: string, error: unknown) => void,
): Promise<string> {
  if (!authorize) throw REFUSED();
  let result: AuthorizeResult;
  try {
    result = await authorize(request);
  } catch (error) {
    onError('authorize threw; the request was refused (403)', error);
    throw REFUSED();
  }
  if (result === null || result === undefined) throw REFUSED();
  const environment: unknown = typeof result === 'object' ? result.environment : undefined;
  try {
    // The engine's own rule (length, no lone surrogates), so HTTP cannot let in what it refuses.
    if (typeof environment !== 'string')
      throw new TypeError(`got ${typeof result === 'object' ? `environment: ${typeof environment}` : typeof result}`);
    return environmentOf(environment);
  } catch (error) {
    onError('authorize returned neither null nor { environment: string } with a valid environment; the request was refused (403)', error);
    throw REFUSED();
  }
}
