// A line diff of two texts (the part's config before and after a deploy), as unified-diff hunks: the
// changed lines with a few lines of context, so a reviewer sees exactly what will change. A longest
// common subsequence over lines: configs are a few hundred lines, and past MAX_CELLS the texts are
// compared outside their common head and tail only.

export interface DiffLine {
  kind: ' ' | '+' | '-';
  text: string;
}

const MAX_CELLS = 4_000_000;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // The common head and tail need no table.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const middle: DiffLine[] = [];
  if ((x.length + 1) * (y.length + 1) > MAX_CELLS) {
    middle.push(...x.map((text) => ({ kind: '-' as const, text })), ...y.map((text) => ({ kind: '+' as const, text })));
  } else {
    // lcs[i][j]: the longest common subsequence of x[i..] and y[j..].
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--)
        lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        middle.push({ kind: ' ', text: x[i++] });
        j++;
      } else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) {
        // Removed lines before added ones, as unified diffs show them.
        middle.push({ kind: '-', text: x[i++] });
      } else middle.push({ kind: '+', text: y[j++] });
    }
  }
  return [
    ...a.slice(0, head).map((text) => ({ kind: ' ' as const, text })),
    ...middle,
    ...a.slice(a.length - tail).map((text) => ({ kind: ' ' as const, text })),
  ];
}

export interface Hunk {
  /** 1-based first line in the old and new text. */
  oldStart: number;
  newStart: number;
  lines: DiffLine[];
}

/** The changed lines with `context` unchanged lines around them, joined where they touch. */
export function hunksOf(lines: DiffLine[], context = 3): Hunk[] {
  const hunks: Hunk[] = [];
  let oldLine = 1;
  let newLine = 1;
  let current: (Hunk & { lastChange: number }) | undefined;
  lines.forEach((line, i) => {
    const changed = line.kind !== ' ';
    const near = changed || lines.slice(i + 1, i + 1 + context).some((l) => l.kind !== ' ');
    if (changed || near || (current && i - current.lastChange <= context)) {
      if (!current) {
        current = { oldStart: oldLine, newStart: newLine, lines: [], lastChange: i };
        hunks.push(current);
      }
      current.lines.push(line);
      if (changed) current.lastChange = i;
    } else current = undefined;
    if (line.kind !== '+') oldLine++;
    if (line.kind !== '-') newLine++;
  });
  return hunks.map(({ oldStart, newStart, lines: l }) => ({ oldStart, newStart, lines: l }));
}
