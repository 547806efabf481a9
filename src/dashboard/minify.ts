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
  /** The text `pattern` matches at `i` (the empty string when it does not). */
  const match = (pattern: RegExp) => {
    pattern.lastIndex = i;
    return pattern.exec(text)?.[0] ?? '';
  };
  /** Writes `token` (or, when empty, the one character at `i`) and moves past it. */
  const emit = (token: string) => {
    const t = token || text[i]!;
    line += t;
    i += t.length;
    return t;
  };

  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '\n' || c === '\r') {
      newline();
      i++;
    } else if (c === ' ' || c === '\t') {
      const spaces = match(SPACES);
      if (line !== '') line += spaces;
      i += spaces.length;
    } else if (c === '/' && next === '*') {
      const comment = match(BLOCK_COMMENT);
      // A comment across lines is a line break to JavaScript; inside a line, a space.
      if (/[\n\r]/.test(comment)) newline();
      else if (js && line !== '') line += ' ';
      i += comment.length;
    } else if (js && c === '/' && next === '/') {
      i += match(LINE_COMMENT).length;
    } else if (c === '"' || c === "'") {
      emit(match(c === '"' ? DOUBLE_QUOTED : SINGLE_QUOTED));
      afterOperand = true;
    } else if (js && (c === '`' || (c === '}' && templates.at(-1) === depth - 1))) {
      // A template literal's text, from its start or from the end of a `${…}`, to its end or its next `${`.
      if (c === '}') {
        templates.pop();
        depth--;
      }
      const part = emit(match(TEMPLATE_PART));
      afterOperand = !part.endsWith('${');
      if (!afterOperand) templates.push(depth++);
    } else if (js && c === '/' && !afterOperand) {
      emit(match(REGEXP));
      afterOperand = true;
    } else if (c === '{' || c === '}') {
      depth += c === '{' ? 1 : -1;
      emit(c);
      afterOperand = false;
    } else {
      const run = emit(match(PLAIN));
      const word = /[\w$]+$/.exec(run)?.[0];
      afterOperand = word ? !BEFORE_OPERAND.has(word) : /[)\]]$/.test(run);
    }
  }
  newline();
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

// Each read at the character that starts its kind (sticky: matched there or not at all).
const SPACES = /[ \t]+/y;
const BLOCK_COMMENT = /\/\*[\s\S]*?(?:\*\/|$)/y;
const LINE_COMMENT = /\/\/[^\n\r]*/y;
const DOUBLE_QUOTED = /"(?:[^"\\]|\\[\s\S])*"/y;
const SINGLE_QUOTED = /'(?:[^'\\]|\\[\s\S])*'/y;
const TEMPLATE_PART = /[`}](?:[^`\\$]|\\[\s\S]|\$(?!\{))*(?:`|\$\{)/y;
const REGEXP = /\/(?:[^/\\[\n\r]|\\.|\[(?:[^\]\\\n\r]|\\.)*\])+\/[a-z]*/y;
/** A run of plain code: up to white space, a quote, `/` or a brace, where something else may start. */
const PLAIN = /[^\n\r \t"'`/{}]+/y;

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
