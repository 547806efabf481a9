import { ValidationError } from '../errors.js';
import { BUILTIN_EVENT_TYPES, type EventTypeDefinition } from './builtins.js';
import { BUILTIN_EXAMPLES, exampleFromSchema } from './examples.js';
import { assertSupportedSchema, validate } from './schema.js';

export type { EventTypeDefinition } from './builtins.js';

/** A JSON pointer (RFC 6901) of one or more tokens: `/user/id`. */
const POINTER = /^(\/([^~/]|~[01])*)+$/;

/** Event type codes: lowercase dotted words, like `user.created` or `billing.invoice_paid`. */
const CODE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** An event type as the management API lists it. */
export interface CatalogEntry extends Omit<EventTypeDefinition, 'subject'> {
  /** Stable id derived from the code. */
  id: string;
  /** Valid `data` for a test event; every entry has one. */
  example: Record<string, unknown>;
  /** The JSON pointer to the event's subject in `data` (ordered delivery per subject), or null: its events have none. */
  subject: string | null;
}

/**
 * The set of event types an engine accepts: the built-ins plus the host's own. Frozen at
 * `createWebhooks()`; `emit` rejects any other type and any `data` its schema refuses.
 *
 * @example
 * ```ts
 * createWebhooks({ ..., eventTypes: [{ code: 'billing.invoice_paid', name: 'Invoice paid', origin: 'acme',
 *   schema: { type: 'object', required: ['invoice_id'], properties: { invoice_id: { type: 'string' } } } }] })
 * ```
 */
export class Catalog {
  readonly #types = new Map<string, CatalogEntry>();

  constructor(extra: readonly EventTypeDefinition[] = []) {
    for (const def of [...BUILTIN_EVENT_TYPES, ...extra]) this.#add(def, BUILTIN_EVENT_TYPES.includes(def));
  }

  #add(def: EventTypeDefinition, builtin: boolean): void {
    if (typeof def?.code !== 'string' || !CODE.test(def.code) || def.code.length > 100) {
      throw new TypeError(`eventTypes: code ${JSON.stringify(def?.code)} must be lowercase dotted words (e.g. "billing.invoice_paid")`);
    }
    if (this.#types.has(def.code)) {
      throw new TypeError(`eventTypes: "${def.code}" is ${builtin ? 'declared twice' : 'already a built-in or declared twice'}`);
    }
    if (typeof def.name !== 'string' || def.name.length === 0) throw new TypeError(`eventTypes: "${def.code}" needs a name`);
    assertSupportedSchema(def.schema);
    if (def.subject !== undefined && (typeof def.subject !== 'string' || !POINTER.test(def.subject)))
      throw new TypeError(`eventTypes: "${def.code}" has a subject that is not a JSON pointer into data (e.g. "/user/id")`);
    const example = exampleOf(def, builtin);
    const entry: CatalogEntry = Object.freeze({
      id: `evtype_${def.code.replace(/\./g, '_')}`,
      code: def.code,
      name: def.name,
      origin: typeof def.origin === 'string' && def.origin ? def.origin : 'custom',
      schema: structuredClone(def.schema),
      example,
      subject: def.subject ?? null,
    });
    this.#types.set(def.code, entry);
  }

  has(code: string): boolean {
    return this.#types.has(code);
  }

  /** The entry of `code`, or undefined. */
  entry(code: string): CatalogEntry | undefined {
    return this.#types.get(code);
  }

  list(): CatalogEntry[] {
    return [...this.#types.values()];
  }

  /**
   * The subject of an event of `type` with this `data` (its entry's pointer followed; a string or
   * a finite number found there, as text, at most 255 characters), or null.
   */
  subjectOf(type: string, data: Record<string, unknown>): string | null {
    const pointer = this.#types.get(type)?.subject;
    if (!pointer) return null;
    let at: unknown = data;
    for (const token of pointer.slice(1).split('/')) {
      if (typeof at !== 'object' || at === null || Array.isArray(at)) return null;
      const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!Object.hasOwn(at, key)) return null;
      at = (at as Record<string, unknown>)[key];
    }
    const found = typeof at === 'string' ? at : typeof at === 'number' && Number.isFinite(at) ? String(at) : null;
    // A NUL or a lone surrogate cannot be stored as text (PostgreSQL refuses NUL): such a subject
    // is kept in its JSON-escaped spelling, the same for every event that names it.
    const value = found === null || !(found.includes('\u0000') || LONE_SURROGATE.test(found)) ? found : JSON.stringify(found).slice(1, -1);
    return value !== null && value.length > 0 && value.length <= 255 ? value : null;
  }

  /** Throws unless `type` is known and `data` matches its schema. */
  validateEvent(type: string, data: unknown): void {
    const entry = this.#types.get(type);
    if (!entry)
      throw new ValidationError(`event type ${JSON.stringify(type)} is not in the catalog`, {
        field: 'type',
        code: 'ERR_UNKNOWN_EVENT_TYPE',
      });
    validate(entry.schema, data, 'data');
  }
}

/** The type's example: given, built-in, or built from the schema; refused at startup unless valid. */
function exampleOf(def: EventTypeDefinition, builtin: boolean): Record<string, unknown> {
  const given = def.example ?? (builtin ? BUILTIN_EXAMPLES[def.code] : undefined);
  const example = given === undefined ? exampleFromSchema(def.schema) : structuredClone(given);
  try {
    if (typeof example !== 'object' || example === null || Array.isArray(example))
      throw new ValidationError('data must be an object', { field: 'data' });
    validate(def.schema, example, 'data');
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new TypeError(
      `eventTypes: "${def.code}" ${given === undefined ? 'needs an `example`: none could be built from its schema' : 'has an `example` that does not match its schema'} (${why})`,
    );
  }
  return deepFreeze(example as Record<string, unknown>);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A lone surrogate (as `storable` in validate.ts, which imports this module's type, tests it). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
