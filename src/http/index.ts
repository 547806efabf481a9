/**
 * `identity-webhooks/http`: the pieces of the HTTP surface a host may use beside `hooks.handler`.
 *
 * @example
 * ```ts
 * import { toNodeHandler } from 'identity-webhooks/http';
 * app.use('/auth', toNodeHandler(hooks.handler));
 * ```
 */

export { MAX_BODY_BYTES } from './body.js';
export type { HttpErrorCode } from './errors.js';
export { HTTP_ERROR_CODES } from './errors.js';
export { toNodeHandler } from './node.js';
export { OPENAPI_PATH, openApiDocument } from './openapi.js';
export { errorResponse } from './responses.js';
