/**
 * The event catalog: every event type a webhook of this environment can receive (the built-ins and
 * the host's own), grouped by resource, each with what it means, the JSON Schema of its `data` and
 * an example of it (what a test event carries). A filter narrows it by code or description.
 */
/** @import { EventType, ViewContext } from './api.js' */
import { h, uid } from './dom.js';
import { codeBlock } from './verify-panel.js';
import { eventName, formatNumber, resourceLabel, t } from './words.js';

/** @param {ViewContext} context */
export async function renderCatalog(context) {
  const types = await context.api.eventTypes();
  /** @type {Map<string, EventType[]>} */
  const groups = new Map();
  for (const type of types) {
    const label = resourceLabel(type.code);
    if (!groups.has(label)) groups.set(label, []);
    groups.get(label)?.push(type);
  }
  const filterId = uid('catalog-filter');
  const none = h('p', { class: 'hint', role: 'status' });
  /** @type {Array<{ element: HTMLElement, text: string }>} */
  const entries = [];
  /** @type {Array<{ element: HTMLElement, members: HTMLElement[] }>} */
  const sections = [];
  const list = h(
    'div',
    { class: 'catalog' },
    [...groups].map(([label, members]) => {
      const headingId = uid('group');
      const items = members.map((type) => {
        const element = entry(context, type);
        entries.push({ element, text: `${type.code} ${eventName(type)}`.toLowerCase() });
        return element;
      });
      const element = h('section', { class: 'catalog-group', 'aria-labelledby': headingId }, h('h3', { id: headingId }, label), items);
      sections.push({ element, members: items });
      return element;
    }),
  );
  const filter = h('input', {
    id: filterId,
    type: 'search',
    autocomplete: 'off',
    oninput: () => {
      const query = filter.value.trim().toLowerCase();
      for (const { element, text } of entries) element.hidden = query !== '' && !text.includes(query);
      for (const { element, members } of sections) element.hidden = members.every((m) => m.hidden);
      none.textContent = entries.every((e) => e.element.hidden) ? t('catalog.none', { query: filter.value.trim() }) : '';
    },
  });
  return h(
    'section',
    { class: 'view' },
    h('button', { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'list' }) }, t('nav.all')),
    h('h2', { tabindex: -1 }, t('catalog.title')),
    h('p', { class: 'hint' }, t('catalog.intro'), ' ', t('catalog.count', { count: formatNumber(types.length) })),
    h('div', { class: 'field catalog-filter' }, h('label', { for: filterId }, t('catalog.filter')), filter),
    none,
    list,
  );
}

/**
 * @param {ViewContext} context
 * @param {EventType} type
 */
function entry(context, type) {
  const headingId = uid('type');
  const example = /** @type {{ example?: unknown }} */ (type).example;
  return h(
    'article',
    { class: 'catalog-entry', 'aria-labelledby': headingId, id: `type-${type.code}` },
    h('h4', { id: headingId, class: 'code' }, type.code),
    h('p', {}, eventName(type)),
    type.origin !== 'kinde' ? h('p', { class: 'hint' }, t('catalog.origin', { origin: type.origin })) : null,
    codeBlock(context, t('catalog.schema'), JSON.stringify(type.schema, null, 2)),
    example === undefined ? null : codeBlock(context, t('catalog.example'), JSON.stringify(example, null, 2)),
  );
}
