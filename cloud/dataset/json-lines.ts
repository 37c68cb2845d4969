// Line numbers in a JSON text, so that an import error can say where in a COCO file the bad image or
// annotation is: the line where the `index`-th element of a top-level array starts, and the line of a
// character position (JSON.parse reports positions).

/** 1-based line of the character at `position`. */
export function lineAt(text: string, position: number): number {
  let line = 1;
  for (let i = 0; i < position && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The line where element `index` of the top-level array `key` starts, or undefined when it is not there. */
export function elementLine(text: string, key: string, index: number): number | undefined {
  let depth = 0;
  let lastString = '';
  let inArray = false;
  let element = -1;
  let awaiting = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (inArray && awaiting && depth === 2) {
        if (++element === index) return lineAt(text, i);
        awaiting = false;
      }
      // The last string before a top-level array opens is that array's key.
      lastString = text.slice(i + 1, j);
      i = j;
      continue;
    }
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') continue;
    if (inArray && depth === 2 && awaiting && c !== ']') {
      if (++element === index) return lineAt(text, i);
      awaiting = false;
    }
    if (c === '{' || c === '[') {
      depth++;
      if (c === '[' && depth === 2 && lastString === key && !inArray) {
        inArray = true;
        awaiting = true;
      }
    } else if (c === '}' || c === ']') {
      if (inArray && depth === 2 && c === ']') return undefined;
      depth--;
    } else if (c === ',' && inArray && depth === 2) {
      awaiting = true;
    }
  }
  return undefined;
}
