import type { AuthorizeResult } from '../engine.js';
import { LIMITS } from '../validate.js';
import { HttpError } from './errors.js';

export type Authorize = (request: Request) => AuthorizeResult | Promise<AuthorizeResult>;

const REFUSED = () => new HttpError(403, 'INVALID_CREDENTIALS', 'the request is not authorized for this API');

/**
 * Runs the host's `authorize` hook and returns the caller's environment, failing closed: no hook,
 * a null answer, a malformed answer or a throw all refuse with the same 403, so a caller learns
 * nothing about why. A throw is 403 rather than 500 because hooks typically throw on a malformed
 * token (a caller error); it is still logged, since it may equally be the host's bug or an outage.
 */
export async function authorizeRequest(authorize: Authorize | undefined, request: Request, onError: (message: string, error: unknown) => void): Promise<string> {
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
  if (typeof environment !== 'string' || environment.length === 0 || environment.length > LIMITS.environmentLength) {
    onError('authorize returned neither null nor { environment: string }; the request was refused (403)', new TypeError(`got ${typeof result}`));
    throw REFUSED();
  }
  return environment;
}
