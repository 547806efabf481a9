import { ValidationError } from '../errors.js';
import { BUILTIN_EVENT_TYPES, type EventTypeDefinition } from './builtins.js';
import { assertSupportedSchema, validate } from './schema.js';

export type { EventTypeDefinition } from './builtins.js';

/** Event type codes: lowercase dotted words, like `user.created` or `billing.invoice_paid`. */
const CODE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** An event type as the management API lists it. */
export interface CatalogEntry extends EventTypeDefinition {
  /** Stable id derived from the code. */
  id: string;
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
    const entry: CatalogEntry = Object.freeze({
      id: `evtype_${def.code.replace(/\./g, '_')}`,
      code: def.code,
      name: def.name,
      origin: typeof def.origin === 'string' && def.origin ? def.origin : 'custom',
      schema: structuredClone(def.schema),
    });
    this.#types.set(def.code, entry);
  }

  has(code: string): boolean {
    return this.#types.has(code);
  }

  list(): CatalogEntry[] {
    return [...this.#types.values()];
  }

  /** Throws unless `type` is known and `data` matches its schema. */
  validateEvent(type: string, data: unknown): void {
    const entry = this.#types.get(type);
    if (!entry) throw new ValidationError(`event type ${JSON.stringify(type)} is not in the catalog`, 'type', 'ERR_UNKNOWN_EVENT_TYPE');
    validate(entry.schema, data, 'data');
  }
}
