// Lines of array elements in JSON text, for import errors that point into a COCO file.
import test from 'ava';
import { elementLine, lineAt } from './json-lines.js';

test('the line where a top-level array element starts, through nested arrays and strings with brackets', (t) => {
  const text = JSON.stringify(
    {
      info: { a: [1, 2] },
      images: [{ id: 1 }, { id: 2 }],
      annotations: [
        { id: 7, bbox: [1, 2, 3, 4] },
        { id: 8, bbox: [5, 6] },
        { id: 9, n: 'x]",[' },
      ],
    },
    null,
    1,
  );
  const lines = text.split('\n');
  for (const [key, i, id] of [
    ['annotations', 0, 7],
    ['annotations', 1, 8],
    ['annotations', 2, 9],
    ['images', 1, 2],
  ] as const) {
    const line = elementLine(text, key, i)!;
    t.is(lines[line - 1].trim(), '{', `${key}[${i}]`);
    t.is(lines[line].trim().replace(/,$/, ''), `"id": ${id}`);
  }
  t.is(elementLine(text, 'annotations', 3), undefined);
  t.is(elementLine(text, 'missing', 0), undefined);
  t.is(elementLine('{"images":[],"annotations":[\n{"a":1},\n{"b":2}]}', 'annotations', 1), 3);
  t.is(lineAt('a\nb\nc', 4), 3);
});
