import type { Catalog } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import { ValidationError, WebhooksError } from './errors.js';
import { newId } from './ids.js';
import type { EventRecord } from './model.js';
import type { DeliveryStore } from './store.js';
import type { StoreAccess } from './store-access.js';
import type { Telemetry } from './telemetry/telemetry.js';
import { transient } from './transient.js';
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
  const write = <Tx>(input: LooseEmitInput, options: { transaction?: Tx; webhookIds?: string[]; test?: true }) =>
    deps.telemetry.emit((traceparent) => writeTraced(input, options, traceparent));
  const writeTraced = async <Tx>(
    input: LooseEmitInput,
    options: { transaction?: Tx; webhookIds?: string[]; test?: true },
    traceparent: string | null,
  ): Promise<EmittedEvent> => {
    const { environment, type, source, data, eventTimestamp } = eventInput(input, catalog, deps.maxPayloadBytes);
    // A test event says so in `data.test`, added after validation: the strict schemas (user.*
    // allow no other members) describe real events, and Kinde-compatible receivers ignore a
    // member they do not know, so the envelope and `data.user` keep their shape.
    if (options.test) data.test = true;
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
    const insert = (store: DeliveryStore) =>
      store.insertEvent(event, {
        newDeliveryId: () => newId('msg', now),
        traceparent,
        transaction: options.transaction,
        webhookIds: options.webhookIds,
        // Ordered delivery per subject: what an ordered webhook queues this event's delivery by.
        subject: catalog.subjectOf(type, data),
      });
    // On our own transaction, a dropped connection costs a transient retry with the same event id
    // (the insert is idempotent), not an error to the host. In the host's transaction a failure is
    // the host's to handle: its transaction is gone with it.
    const deliveries = await access.run('writing the event', (store) =>
      options.transaction === undefined
        ? transient(
            (e) => store.isTransient(e),
            () => insert(store),
            EMIT_TRANSIENT_BUDGET_MS,
            0,
          )
        : insert(store),
    );
    // Within a host transaction the rows are not visible until the host commits; the poll (or
    // an explicit wake() after commit) picks them up.
    if (deliveries.length > 0) deps.wake();
    // Field by field, not `{ ...event, deliveryIds }`: on Node 20 a property added after a spread
    // is slow to add and gives the object a shape of its own, and this runs for every emit.
    const { id, createdAt } = event;
    return {
      id,
      environment,
      type,
      source,
      data,
      eventTimestamp: event.eventTimestamp,
      createdAt,
      deliveryIds: deliveries.map((d) => d.id),
    };
  };
  return {
    emit: <Tx>(input: EmitInput, options: { transaction?: Tx } = {}) => write(input, { transaction: options.transaction }),
    emitTo: (webhookId: string, input: LooseEmitInput) => write(input, { webhookIds: [webhookId], test: true }),
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
    json = stringifyData(input.data);
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError(`data must be JSON-serialisable (${error instanceof Error ? error.message.split('\n')[0] : 'not JSON'})`, {
      field: 'data',
    });
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxPayloadBytes) {
    throw new WebhooksError('ERR_PAYLOAD_TOO_LARGE', `data is ${bytes} bytes; the limit is ${maxPayloadBytes}`, { field: 'data' });
  }
  const data = JSON.parse(json) as Record<string, unknown>;
  const deep = tooDeep(data, MAX_DEPTH);
  if (deep !== null) {
    // Deeper data is stored fine but overflows the stack wherever it is read back recursively (it
    // used to fail every attempt as `internal`, charged to the webhook's endpoint).
    throw new ValidationError(`data is nested more than ${MAX_DEPTH} levels deep (at ${deep})`, { field: 'data' });
  }
  catalog.validateEvent(input.type, data);
  const eventTimestamp = input.eventTimestamp === undefined ? undefined : +input.eventTimestamp;
  // Stored as a 64-bit integer of milliseconds and sent as an ISO time: it must be a whole number
  // within the Date range (±8.64e15 milliseconds), or one store would refuse it and the other keep
  // it.
  if (eventTimestamp !== undefined && (!Number.isSafeInteger(eventTimestamp) || Math.abs(eventTimestamp) > MAX_TIME)) {
    throw new ValidationError('eventTimestamp must be a valid time: a Date, or whole milliseconds since the epoch within the Date range', {
      field: 'eventTimestamp',
    });
  }
  return { environment, type: input.type, source: input.source, data, eventTimestamp };
}

/** How long emit's transient retry waits out a database that dropped its connection before it reports ERR_STORE. */
const EMIT_TRANSIENT_BUDGET_MS = 5_000;

/** Deepest nesting of objects and arrays `data` may have (the built-in events use 5). */
export const MAX_DEPTH = 32;
const MAX_TIME = 8.64e15;

/** The path of the first value nested deeper than `max`, or null. Iterative: deep input cannot overflow the stack here. */
function tooDeep(root: unknown, max: number): string | null {
  type Node = { value: unknown; depth: number; parent: Node | null; key: string };
  const stack: Node[] = [{ value: root, depth: 0, parent: null, key: 'data' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.value !== 'object' || node.value === null) continue;
    if (node.depth >= max) return pathOf(node);
    for (const key of Object.keys(node.value)) {
      stack.push({ value: (node.value as Record<string, unknown>)[key], depth: node.depth + 1, parent: node, key });
    }
  }
  return null;
}

/**
 * `JSON.stringify(data)`, refusing a `toJSON()` that yields nothing (`undefined`, a function, a
 * symbol): at the top it leaves no JSON at all, below it a member that silently vanishes (or an
 * array slot that becomes null), data the host meant to send and did not. The error names the
 * path in its field and message, as the schema's checks do. Every emit pays only for a replacer
 * that looks; the one that tracks paths runs once something was found.
 */
function stringifyData(data: object): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(data, looks);
  } catch (error) {
    if (error !== FOUND) throw error;
    const path = findEmptyToJSON(data);
    const shown = path.length > 120 ? `${path.slice(0, 117)}...` : path;
    throw new ValidationError(`${shown}: its toJSON() returned nothing to send`, { field: shown });
  }
  // Reached only if the top-level value serialises to nothing without a toJSON.
  if (typeof json !== 'string') throw new ValidationError('data must be JSON-serialisable', { field: 'data' });
  return json;
}

const FOUND = Symbol('a toJSON() that yields nothing');

function yieldsNothing(holder: Record<string, unknown>, key: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'function' && typeof value !== 'symbol') return false;
  const original = holder[key];
  return typeof original === 'object' && original !== null && typeof (original as { toJSON?: unknown }).toJSON === 'function';
}

function looks(this: Record<string, unknown>, key: string, value: unknown): unknown {
  if (yieldsNothing(this, key, value)) throw FOUND;
  return value;
}

/** The path of the first `toJSON()` that yields nothing: a second serialisation, tracking each object's path. */
function findEmptyToJSON(data: object): string {
  const paths = new WeakMap<object, string>();
  let found = 'data';
  try {
    JSON.stringify(data, function (this: Record<string, unknown>, key: string, value: unknown) {
      const holder = paths.get(this);
      const path = holder === undefined ? 'data' : Array.isArray(this) ? `${holder}[${key}]` : `${holder}.${key}`;
      if (yieldsNothing(this, key, value)) {
        found = path;
        throw FOUND;
      }
      if (typeof value === 'object' && value !== null) paths.set(value, path);
      return value;
    });
  } catch (error) {
    if (error !== FOUND) throw error;
  }
  return found;
}

/** `data.a.b[0]…`, built only for the error (kept short). */
function pathOf(node: { parent: { parent: unknown; key: string } | null; key: string } | null): string {
  const keys: string[] = [];
  for (let n = node as { parent: unknown; key: string } | null; n; n = n.parent as typeof n) keys.push(n.key);
  const path = keys.reverse().join('.');
  return path.length > 120 ? `${path.slice(0, 117)}...` : path;
}
