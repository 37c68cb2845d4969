// Checks a manual (any *.md of the repository outside node_modules/, gen/ and dist/) against the tree,
// so that a manual cannot drift from the code it describes. Three rules, each failure naming the
// manual, the line and what is missing:
//
//   1. A relative link `[text](path)` names a file or folder that exists, resolved from the manual's own
//      folder. Links with a scheme (https:, mailto:) are not followed.
//   2. A link's `#anchor`, to the same manual or another one, names a heading that exists there, with
//      GitHub's anchors: lower case, punctuation other than `-` and `_` dropped, spaces as `-`, and
//      `-1`, `-2`... for repeated headings.
//   3. A source path in backticks that starts at a top-level folder of the repository, such as
//      `core/kernel/machine.ts` or `drivers/board/fake/`, exists, resolved from the repository root.
//      Write paths of the repository that way, from the root. A path with a placeholder (`<name>`, `*`,
//      `{a,b}`, `...`) is a pattern, not a path, and is not checked. Paths under gen/ and dist/ are built,
//      not committed, and are not checked either.
//   4. A file name in backticks with a source extension (.ts, .mjs, .py, .proto), such as
//      `ml-training.ts` in a code map, exists below the manual's own folder (any depth); one with a
//      folder, such as `python/train_builtin.py`, exists relative to the manual's folder. So a code map
//      lives beside the code it maps.
//
// Fenced code blocks are skipped: their contents are commands and output, not references.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const TOP_LEVEL = ['core', 'cloud', 'plugins', 'drivers', 'scripts', 'proto', 'examples', 'web', '.ci'];
const SKIPPED_FOLDERS = new Set(['node_modules', 'gen', 'dist', '.git']);

export interface ManualProblem {
  manual: string;
  line: number;
  message: string;
}

/** Every manual of the repository, relative to `root`. */
export function listManuals(root: string, dir = root, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_FOLDERS.has(entry.name) || entry.name.startsWith('.platform')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listManuals(root, path, out);
    else if (entry.name.endsWith('.md')) out.push(relative(root, path));
  }
  return out.sort();
}

/** GitHub's anchor for a heading text. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): Array<{ line: number; text: string }> {
  const lines: Array<{ line: number; text: string }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((content, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(content)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) lines.push({ line: index + 1, text: content });
  });
  return lines;
}

/** The anchors of every heading of a manual, repeated ones numbered as GitHub numbers them. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const LINK = /\[(?:[^\]`]|`[^`]*`)*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const CODE = /`([^`\n]+)`/g;
const PATTERN = /[<>*{}]|\.\.\.|\$/;
const SOURCE_FILE = /\.(ts|mjs|py|proto)$/;

/** Whether a file of that name exists in `dir` or any folder below it. */
function existsBelow(dir: string, name: string): boolean {
  if (existsSync(join(dir, name))) return true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name) && !entry.name.startsWith('.') && existsBelow(join(dir, entry.name), name)) return true;
  }
  return false;
}

/** The problems of one manual (path relative to root). */
export function checkManual(root: string, manual: string, text = readFileSync(join(root, manual), 'utf8')): ManualProblem[] {
  const problems: ManualProblem[] = [];
  const here = dirname(join(root, manual));
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    let anchors = anchorCache.get(file);
    if (!anchors) anchorCache.set(file, (anchors = anchorsOf(file === join(root, manual) ? text : readFileSync(file, 'utf8'))));
    return anchors;
  };
  for (const { line, text: content } of proseLines(text)) {
    // Links first; then backticked paths outside links' targets.
    for (const match of content.matchAll(LINK)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const file = pathPart === '' ? join(root, manual) : resolve(here, decodeURIComponent(pathPart));
      const shown = relative(root, file) || '.';
      if (file !== join(root, manual) && !existsSync(file)) {
        problems.push({ manual, line, message: `link to ${target}: ${shown} does not exist` });
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (!file.endsWith('.md')) continue;
        if (!anchorsIn(file).has(anchor.toLowerCase()))
          problems.push({ manual, line, message: `link to ${target}: ${shown} has no heading with anchor #${anchor}` });
      }
    }
    const withoutLinkTargets = content.replace(LINK, (whole) => whole.replace(/\]\([^)]*\)/, ']'));
    for (const match of withoutLinkTargets.matchAll(CODE)) {
      const path = match[1].trim().replace(/[:,.;]$/, '');
      const first = path.split('/')[0];
      if (PATTERN.test(path) || /[\s:@~]/.test(path) || path.startsWith('/') || path.startsWith('.')) continue;
      if (path.includes('/') && TOP_LEVEL.includes(first)) {
        if (!existsSync(join(root, path)))
          problems.push({
            manual,
            line,
            message: `\`${path}\` names a source path that does not exist (paths that start at a top-level folder are read from the repository root)`,
          });
      } else if (SOURCE_FILE.test(path) && !['gen', 'dist', 'node_modules'].includes(first)) {
        const found = path.includes('/') ? existsSync(join(here, path)) : existsBelow(here, path);
        const where = path.includes('/')
          ? `relative to ${relative(root, here) || 'the repository root'}`
          : `in ${relative(root, here) || 'the repository'} or below`;
        if (!found)
          problems.push({
            manual,
            line,
            message: `\`${path}\` names a source file that does not exist ${where} (write a path of another folder from the repository root)`,
          });
      }
    }
  }
  return problems;
}
