import { ValidationError } from '../errors.js';

/**
 * The JSON Schema subset the catalog understands. Enough for identity payloads, small enough to
 * check in microseconds on every `emit`. A schema using any other keyword is refused when it is
 * registered (a keyword silently ignored would be a check silently skipped).
 */
export interface JsonSchema {
  type?: JsonType | JsonType[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  format?: 'date-time' | 'email' | 'uri';
  title?: string;
  description?: string;
  examples?: unknown[];
  $comment?: string;
}

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'format',
  'title',
  'description',
  'examples',
  '$comment',
]);
const TYPES = new Set<JsonType>(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'email', 'uri']);

/** Throws a TypeError naming the first keyword of `schema` this validator would not enforce. */
export function assertSupportedSchema(schema: unknown, path = '#'): asserts schema is JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError(`schema ${path} must be an object`);
  }
  for (const [key, value] of Object.entries(schema)) {
    if (!KEYWORDS.has(key)) throw new TypeError(`schema ${path}: keyword "${key}" is not supported`);
    if (key === 'type') {
      for (const t of Array.isArray(value) ? value : [value]) {
        if (!TYPES.has(t)) throw new TypeError(`schema ${path}: unknown type ${JSON.stringify(t)}`);
      }
    } else if (key === 'properties') {
      for (const [name, sub] of Object.entries(value as object)) assertSupportedSchema(sub, `${path}/properties/${name}`);
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) {
      assertSupportedSchema(value, `${path}/${key}`);
    } else if (key === 'anyOf') {
      if (!Array.isArray(value) || value.length === 0) throw new TypeError(`schema ${path}: anyOf must be a non-empty array`);
      for (const [i, sub] of value.entries()) assertSupportedSchema(sub, `${path}/anyOf/${i}`);
    } else if (key === 'format' && !FORMATS.has(value as string)) {
      throw new TypeError(`schema ${path}: format ${JSON.stringify(value)} is not supported`);
    }
  }
}

/** Validates `value` against `schema`; throws a ValidationError naming the offending path. */
export function validate(schema: JsonSchema, value: unknown, path: string): void {
  const problem = check(schema, value, path);
  if (problem) throw new ValidationError(`${problem.path} ${problem.message}`, { field: problem.path });
}

interface Problem {
  path: string;
  message: string;
}

function check(schema: JsonSchema, value: unknown, path: string): Problem | null {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => isType(t, value))) return { path, message: `must be ${describe(types)}` };
  }
  if (schema.const !== undefined && !sameJson(schema.const, value)) {
    return { path, message: `must be ${JSON.stringify(schema.const)}` };
  }
  if (schema.enum && !schema.enum.some((e) => sameJson(e, value))) {
    return { path, message: `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` };
  }
  if (schema.anyOf) {
    const problems = schema.anyOf.map((s) => check(s, value, path));
    if (problems.every((p) => p !== null)) return deepest(problems as Problem[]);
  }
  if (typeof value === 'string') return checkString(schema, value, path);
  if (typeof value === 'number') return checkNumber(schema, value, path);
  if (Array.isArray(value)) return checkArray(schema, value, path);
  if (typeof value === 'object' && value !== null) return checkObject(schema, value as Record<string, unknown>, path);
  return null;
}

function checkString(schema: JsonSchema, value: string, path: string): Problem | null {
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength) {
    return { path, message: `must be at least ${schema.minLength} characters long` };
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    return { path, message: `must be at most ${schema.maxLength} characters long` };
  }
  if (
    schema.format === 'date-time' &&
    (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(value) || Number.isNaN(Date.parse(value)))
  ) {
    return { path, message: 'must be an ISO 8601 date-time' };
  }
  if (schema.format === 'email' && !/^[^\s@]+@[^\s@]+$/.test(value)) return { path, message: 'must be an email address' };
  if (schema.format === 'uri' && !URL.canParse(value)) return { path, message: 'must be an absolute URI' };
  return null;
}

function checkNumber(schema: JsonSchema, value: number, path: string): Problem | null {
  if (schema.minimum !== undefined && value < schema.minimum) return { path, message: `must be >= ${schema.minimum}` };
  if (schema.maximum !== undefined && value > schema.maximum) return { path, message: `must be <= ${schema.maximum}` };
  return null;
}

function checkArray(schema: JsonSchema, value: unknown[], path: string): Problem | null {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    return { path, message: `must have at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}` };
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    return { path, message: `must have at most ${schema.maxItems} items` };
  }
  if (schema.items) {
    for (let i = 0; i < value.length; i++) {
      const p = check(schema.items, value[i], `${path}[${i}]`);
      if (p) return p;
    }
  }
  return null;
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string): Problem | null {
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name) || value[name] === undefined) return { path: `${path}.${name}`, message: 'is required' };
  }
  const props = schema.properties ?? {};
  for (const [name, v] of Object.entries(value)) {
    const sub = Object.hasOwn(props, name) ? props[name] : undefined;
    if (sub) {
      const p = check(sub, v, `${path}.${name}`);
      if (p) return p;
    } else if (schema.additionalProperties === false) {
      return { path: `${path}.${name}`, message: 'is not an allowed property' };
    } else if (typeof schema.additionalProperties === 'object') {
      const p = check(schema.additionalProperties, v, `${path}.${name}`);
      if (p) return p;
    }
  }
  return null;
}

function isType(type: JsonType, value: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

function describe(types: JsonType[]): string {
  const words = types.map((t) => (t === 'null' ? 'null' : t === 'array' || t === 'object' || t === 'integer' ? `an ${t}` : `a ${t}`));
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

function deepest(problems: Problem[]): Problem {
  return problems.reduce((a, b) => (b.path.length > a.path.length ? b : a));
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
