/**
 * What the page says, in words a person understands: statuses, and the API's error codes mapped
 * to the form field they belong to. The server's own message is kept only where ours would say
 * less (it names the exact rule).
 */

/** Error code → [field or null, words]. */
const ERRORS = {
  INVALID_NAME: ['name', 'Enter a name of up to 255 characters, without line breaks.'],
  INVALID_DESCRIPTION: ['description', 'The description can be up to 1000 characters.'],
  INVALID_ENDPOINT: ['endpoint', 'Enter the full address of your endpoint, starting with https://, like https://example.com/webhooks.'],
  ENDPOINT_NOT_ALLOWED: [
    'endpoint',
    'This address is on a private or reserved network that webhooks may not reach. Use your endpoint’s public address.',
  ],
  INVALID_EVENT_TYPES: ['event_types', 'Choose at least one event (at most 50).'],
  UNKNOWN_EVENT_TYPE: ['event_types', 'One of the chosen events is not offered any more. Remove it and try again.'],
  WEBHOOK_LIMIT_REACHED: [
    null,
    'You have reached the number of webhooks your plan allows. Delete one you no longer need, or upgrade your plan.',
  ],
  WEBHOOK_NOT_FOUND: [null, 'This webhook no longer exists. It may have been deleted.'],
  WEBHOOK_DISABLED: [null, 'This webhook is disabled. Enable it first, then try again.'],
  INVALID_CREDENTIALS: [null, 'You are not signed in, or not allowed to manage webhooks here. Sign in again and reload the page.'],
  CROSS_SITE_REQUEST: [null, 'This change was refused because it did not come from this page. Reload the page and try again.'],
  PAYLOAD_TOO_LARGE: [null, 'That is too much text. Shorten the description and try again.'],
  SERVICE_UNAVAILABLE: [null, 'The service is restarting. Try again in a moment.'],
  ROUTE_NOT_FOUND: [null, 'This server does not offer this yet. Ask the service to update.'],
  NETWORK: [null, 'Could not reach the server. Check your connection and try again.'],
};

/** `{ field, text }` for an ApiError (field is null when the error belongs to the whole form). */
export function explain(error) {
  const known = ERRORS[error?.code];
  if (known) return { field: known[0], text: known[1] };
  if (error?.status >= 500 || !error?.status) return { field: null, text: 'Something went wrong on our side. Try again in a moment.' };
  // A 4xx we have no words for: the server's message names the problem better than a guess would.
  return { field: null, text: error.message || 'The request was refused.' };
}

/** The status line of a webhook. */
export function webhookStatus(webhook, formatTime) {
  if (webhook.status === 'disabled') {
    if (webhook.disabled_reason === 'failing') {
      return { kind: 'failing', text: `Disabled because failing since ${formatTime(webhook.failing_since ?? webhook.disabled_on)}` };
    }
    return { kind: 'disabled', text: 'Disabled' };
  }
  if (webhook.failing_since) return { kind: 'warning', text: `Enabled, failing since ${formatTime(webhook.failing_since)}` };
  return { kind: 'enabled', text: 'Enabled' };
}

export const DELIVERY_STATUS = {
  pending: 'Pending',
  held: 'Held (webhook disabled)',
  delivered: 'Delivered',
  failed: 'Failed',
};

/** "user.created" → "User"; "access_request.created" → "Access request". */
export function resourceLabel(code) {
  const resource = code.includes('.') ? code.slice(0, code.indexOf('.')) : code;
  const words = resource.replace(/[_-]+/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
