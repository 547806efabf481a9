/**
 * The dashboard's modules and stylesheets as served: their comments, indentation, trailing spaces
 * and blank lines left out, every token and every line break between tokens kept (so automatic
 * semicolon insertion reads them as it reads the source). The sources stay as written, with their
 * TSDoc; what a reader downloads is the code. Strings, template literals (their text and their
 * `${…}` alike) and regular expressions pass through as they are.
 *
 * Not a general minifier: it knows the JavaScript and CSS the assets are written in (a `/` after
 * an operand is a division, elsewhere a regular expression, as in them), and
 * test/dashboard/minify.test.ts checks that every asset is the same program after it.
 */
export function stripAsset(text: string, kind: 'js' | 'css'): string {
  const js = kind === 'js';
  const lines: string[] = [];
  /** The line being written: empty while nothing but indentation has come. */
  let line = '';
  /** The code so far ends with an operand (a name, a number, `)`, `]`, a literal): a `/` next divides. */
  let afterOperand = false;
  /** Brace depths at which a template literal's `${…}` ends, innermost last. */
  const templates: number[] = [];
  let depth = 0;
  let i = 0;

  const newline = () => {
    line = line.trimEnd();
    if (line !== '') lines.push(line);
    line = '';
  };
  const emit = (from: number) => {
    line += text.slice(from, i);
  };
  /** Copies from `i` (the opening quote, or the `}` that ends a `${…}`) to the literal's end or its next `${`. */
  const literal = (quote: string) => {
    const from = i++;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\\') i += 2;
      else if (c === quote) {
        i++;
        afterOperand = true;
        break;
      } else if (quote === '`' && c === '$' && text[i + 1] === '{') {
        i += 2;
        templates.push(depth++);
        afterOperand = false;
        break;
      } else i++;
    }
    emit(from);
  };

  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '\n' || c === '\r') {
      newline();
      i++;
    } else if (c === ' ' || c === '\t') {
      if (line !== '') line += c;
      i++;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      // A comment across lines is a line break to JavaScript; inside a line, a space.
      if (/[\n\r]/.test(text.slice(i, stop))) newline();
      else if (js && line !== '') line += ' ';
      i = stop;
    } else if (js && c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
    } else if (c === '"' || c === "'" || (js && c === '`')) {
      literal(c);
    } else if (js && c === '}' && templates.at(-1) === depth - 1) {
      templates.pop();
      depth--;
      literal('`');
    } else if (js && c === '/' && !afterOperand) {
      const from = i++;
      let inClass = false;
      while (i < text.length) {
        const r = text[i++]!;
        if (r === '\\') i++;
        else if (r === '[') inClass = true;
        else if (r === ']') inClass = false;
        else if (r === '/' && !inClass) break;
      }
      while (i < text.length && /[a-z]/i.test(text[i]!)) i++;
      emit(from);
      afterOperand = true;
    } else {
      const from = i;
      const name = /^[\w$]+/.exec(text.slice(i, i + 64))?.[0];
      if (name) {
        i += name.length;
        afterOperand = !BEFORE_OPERAND.has(name);
      } else {
        if (c === '{') depth++;
        else if (c === '}') depth--;
        i++;
        afterOperand = c === ')' || c === ']';
      }
      emit(from);
    }
  }
  newline();
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** Words after which a `/` starts a regular expression, not a division. */
const BEFORE_OPERAND = new Set([
  'return',
  'typeof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'instanceof',
  'yield',
  'await',
]);
