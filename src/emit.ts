import type { Catalog } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import { ValidationError, WebhooksError } from './errors.js';
import { newId } from './ids.js';
import type { EventRecord } from './model.js';
import type { StoreAccess } from './store-access.js';
import type { Telemetry } from './telemetry/telemetry.js';
import type { EmitInput, EmittedEvent } from './types.js';
import { environmentOf, SOURCES } from './validate.js';

/** What emit checks at run time: JavaScript callers (and test events) are not held to the compile-time union. */
export interface LooseEmitInput {
  type: string;
  source: EmitInput['source'];
  data: Record<string, unknown>;
  eventTimestamp?: number | Date;
  environment?: string;
}

export interface EmitDeps {
  access: StoreAccess;
  clock: Clock;
  catalog: Catalog;
  maxPayloadBytes: number;
  /** Tells the scheduler that work may be due now. */
  wake(): void;
  /** The `webhooks.emit` span (its traceparent is stored with the event) and the event count. */
  telemetry: Telemetry;
}

/**
 * `emit`: validate the event, then ONE store call writes it with a delivery per subscribed
 * enabled webhook (in the host's transaction when given), then wake the scheduler. Nothing
 * waits for HTTP. `emitTo` is the same for a test event: to one webhook, subscribed or not.
 */
export function createEmit(deps: EmitDeps) {
  const { access, clock, catalog } = deps;
  const write = <Tx>(input: LooseEmitInput, options: { transaction?: Tx; webhookIds?: string[] }) =>
    deps.telemetry.emit((traceparent) => writeTraced(input, options, traceparent));
  const writeTraced = async <Tx>(
    input: LooseEmitInput,
    options: { transaction?: Tx; webhookIds?: string[] },
    traceparent: string | null,
  ): Promise<EmittedEvent> => {
    const { environment, type, source, data, eventTimestamp } = eventInput(input, catalog, deps.maxPayloadBytes);
    const now = clock.now();
    const event: EventRecord = {
      id: newId('event', now),
      environment,
      type,
      source,
      data,
      eventTimestamp: eventTimestamp ?? now,
      createdAt: now,
    };
    const deliveries = await access.run('writing the event', (store) =>
      store.insertEvent(event, {
        newDeliveryId: () => newId('msg', now),
        traceparent,
        transaction: options.transaction,
        webhookIds: options.webhookIds,
      }),
    );
    // Within a host transaction the rows are not visible until the host commits; the poll (or
    // an explicit wake() after commit) picks them up.
    if (deliveries.length > 0) deps.wake();
    return { ...event, deliveryIds: deliveries.map((d) => d.id) };
  };
  return {
    emit: <Tx>(input: EmitInput, options: { transaction?: Tx } = {}) => write(input, { transaction: options.transaction }),
    emitTo: (webhookId: string, input: LooseEmitInput) => write(input, { webhookIds: [webhookId] }),
  };
}

/** Checks an event before anything is written; the data kept is its JSON form, as the wire will carry it. */
function eventInput(input: LooseEmitInput, catalog: Catalog, maxPayloadBytes: number) {
  if (typeof input !== 'object' || input === null) throw new ValidationError('emit: event must be an object');
  const environment = environmentOf(input.environment);
  if (typeof input.type !== 'string') throw new ValidationError('type is required and must be a string', { field: 'type' });
  if (!SOURCES.includes(input.source)) throw new ValidationError(`source must be one of ${SOURCES.join(', ')}`, { field: 'source' });
  if (typeof input.data !== 'object' || input.data === null || Array.isArray(input.data)) {
    throw new ValidationError('data must be an object', { field: 'data' });
  }
  // Validate and store what the wire will carry: the JSON form (a Date becomes its ISO string,
  // undefined members vanish), so the returned event equals the stored one.
  let json: string;
  try {
    json = JSON.stringify(input.data);
  } catch (error) {
    throw new ValidationError(`data must be JSON-serialisable (${error instanceof Error ? error.message.split('\n')[0] : 'not JSON'})`, {
      field: 'data',
    });
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxPayloadBytes) {
    throw new WebhooksError('ERR_PAYLOAD_TOO_LARGE', `data is ${bytes} bytes; the limit is ${maxPayloadBytes}`, { field: 'data' });
  }
  const data = JSON.parse(json) as Record<string, unknown>;
  catalog.validateEvent(input.type, data);
  const eventTimestamp = input.eventTimestamp === undefined ? undefined : +input.eventTimestamp;
  if (eventTimestamp !== undefined && !Number.isFinite(eventTimestamp)) {
    throw new ValidationError('eventTimestamp must be a valid time', { field: 'eventTimestamp' });
  }
  return { environment, type: input.type, source: input.source, data, eventTimestamp };
}
