// XML as indented text, for reading (CONTRACT 9: xml bodies are kept as
// text). Nothing here parses the XML as a document or as HTML: it only cuts
// the text into tags and the text between them, and starts each on its own
// line, two spaces deeper inside an element (down to 40 levels); the page shows the result as
// text. One pass, no regular expression that could backtrack: linear in the
// text whatever it holds. Broken XML comes out as readable as it went in.

const INDENT = '  ';
/** Deeper elements are indented as much as this level: 100,000 nested tags must not make gigabytes of spaces. */
const MAX_INDENT = 40;

function indent(depth: number): string {
  return INDENT.repeat(Math.min(depth, MAX_INDENT));
}

/** The kinds of piece the text is cut into. */
type Piece = { kind: 'open' | 'close' | 'other'; text: string; name?: string } | { kind: 'text'; text: string };

/** `xml` with one tag (or run of text) a line, indented by nesting depth; `<a>short</a>` stays on one line. */
export function indentXml(xml: string): string {
  const pieces = [...cut(xml)];
  const lines: string[] = [];
  let depth = 0;
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] as Piece;
    if (piece.kind === 'text') {
      lines.push(indent(depth) + piece.text);
      continue;
    }
    if (piece.kind === 'close') depth = Math.max(0, depth - 1);
    const inner = pieces[i + 1];
    const close = pieces[i + 2];
    if (piece.kind === 'open' && inner?.kind === 'text' && close?.kind === 'close' && close.name === piece.name) {
      lines.push(indent(depth) + piece.text + inner.text + close.text);
      i += 2;
      continue;
    }
    lines.push(indent(depth) + piece.text);
    if (piece.kind === 'open') depth++;
  }
  return lines.join('\n');
}

/** The tags, comments, declarations and text runs of `xml`, in order; text trimmed, blank text left out. */
function* cut(xml: string): Generator<Piece> {
  let at = 0;
  let from = 0;
  while (from < xml.length) {
    const start = xml.indexOf('<', from);
    if (start === -1) break;
    const end = markupEnd(xml, start);
    if (end === undefined) break;
    if (end < 0) {
      // A `<` that is text (`1 < 2`): look on from the next one, keeping what came before as text.
      from = -end;
      continue;
    }
    const text = xml.slice(at, start).trim();
    if (text !== '') yield { kind: 'text', text };
    yield markup(xml.slice(start, end));
    at = end;
    from = end;
  }
  const rest = xml.slice(at).trim();
  if (rest !== '') yield { kind: 'text', text: rest };
}

/**
 * Where the markup that starts at `start` ends (one past its `>`); minus the
 * place of the next `<` when this one is text (a `<` comes before any `>`);
 * undefined when a comment, section or quote never closes (the rest is text).
 */
function markupEnd(xml: string, start: number): number | undefined {
  for (const [opening, closing] of [
    ['<!--', '-->'],
    ['<![CDATA[', ']]>'],
    ['<?', '?>'],
  ] as const) {
    if (xml.startsWith(opening, start)) {
      const end = xml.indexOf(closing, start + opening.length);
      return end === -1 ? undefined : end + closing.length;
    }
  }
  let quote = '';
  for (let i = start + 1; i < xml.length; i++) {
    const char = xml[i];
    if (quote !== '') {
      if (char === quote) quote = '';
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '>') {
      return i + 1;
    } else if (char === '<') {
      return -i;
    }
  }
  return undefined;
}

function markup(text: string): Piece {
  if (text.startsWith('</')) return { kind: 'close', text, name: tagName(text.slice(2)) };
  if (text.startsWith('<!') || text.startsWith('<?') || text.endsWith('/>')) return { kind: 'other', text };
  return { kind: 'open', text, name: tagName(text.slice(1)) };
}

function tagName(after: string): string {
  let end = 0;
  while (end < after.length && !/[\s/>]/.test(after[end] as string)) end++;
  return after.slice(0, end);
}
