/**
 * Renders `src/receiver/event-types.generated.ts` from the catalog: one `data` type and one
 * envelope type per built-in event, the map by code and the discriminated union. The receiver's
 * types are derived from the same schemas `emit` validates against, so they cannot drift:
 * test/receiver/types.test.ts renders in memory and compares with the committed file, and
 * `npm run gen:event-types` (that test with GEN_EVENT_TYPES=1) rewrites it.
 */
import type { EventTypeDefinition } from '../src/catalog/builtins.js';
import type { JsonSchema, JsonType } from '../src/catalog/schema.js';

export const GENERATED_PATH = 'src/receiver/event-types.generated.ts';

export function renderEventTypes(defs: readonly EventTypeDefinition[]): string {
  const out: string[] = [
    '// Generated from BUILTIN_EVENT_TYPES (src/catalog/builtins.ts) by scripts/event-types.ts.',
    '// Do not edit: run `npm run gen:event-types`. test/receiver/types.test.ts fails when this drifts.',
    "import type { WebhookEnvelope } from './envelope.js';",
    '',
  ];
  for (const def of defs) {
    const name = pascal(def.code);
    out.push(`/** \`data\` of \`${def.code}\` (${escapeDoc(def.name)}). */`);
    out.push(`export type ${name}Data = ${typeOf(def.schema, '')};`, '');
    out.push(`/** \`${def.code}\`: ${escapeDoc(def.name)}. */`);
    out.push(`export type ${name}Event = WebhookEnvelope<${quote(def.code)}, ${name}Data>;`, '');
  }
  out.push('/** Every built-in event type by its code. */', 'export type WebhookEventMap = {');
  for (const def of defs) out.push(`  ${quote(def.code)}: ${pascal(def.code)}Event;`);
  out.push('};', '');
  out.push('/** Any built-in event: a union discriminated on `type`. */');
  out.push('export type WebhookEvent = WebhookEventMap[keyof WebhookEventMap];', '');
  return out.join('\n');
}

/** The TypeScript type of values `schema` accepts (for the subset schema.ts supports). */
export function typeOf(schema: JsonSchema, indent: string): string {
  let own: string | undefined;
  if (schema.const !== undefined) own = literal(schema.const);
  else if (schema.enum) own = union(schema.enum.map(literal));
  else if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    own = union(types.map((t) => primitive(t, schema, indent)));
  }
  const alternatives = schema.anyOf ? union(schema.anyOf.map((s) => typeOf(s, indent))) : undefined;
  if (own && alternatives) return `(${own}) & (${alternatives})`;
  return own ?? alternatives ?? 'unknown';
}

function primitive(type: JsonType, schema: JsonSchema, indent: string): string {
  switch (type) {
    case 'object':
      return objectType(schema, indent);
    case 'array':
      return schema.items ? `Array<${typeOf(schema.items, indent)}>` : 'unknown[]';
    case 'integer':
      return 'number';
    default:
      return type; // string, number, boolean, null are spelled the same in TypeScript
  }
}

function objectType(schema: JsonSchema, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const props = schema.properties ?? {};
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(props)) {
    const doc = [sub.description, sub.format && `format: ${sub.format}`].filter(Boolean).join('; ');
    if (doc) lines.push(`${inner}/** ${escapeDoc(doc)} */`);
    lines.push(`${inner}${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(sub, inner)};`);
  }
  for (const name of required) if (!Object.hasOwn(props, name)) lines.push(`${inner}${key(name)}: unknown;`);
  // Open objects may carry fields a newer sender adds; the index signature keeps them reachable.
  if (schema.additionalProperties !== false) lines.push(`${inner}[key: string]: unknown;`);
  if (lines.length === 0) return 'Record<string, never>';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function union(members: string[]): string {
  return [...new Set(members)].join(' | ') || 'never';
}

function literal(value: unknown): string {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'unknown';
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name);
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function pascal(code: string): string {
  return code
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function escapeDoc(text: string): string {
  return text.replace(/\*\//g, '*\\/');
}
