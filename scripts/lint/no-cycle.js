// ESLint rule `platform/no-cycle`: no import cycle between the project's files, type-only imports
// included. eslint-plugin-import-x's no-cycle skips `import type`, yet a type cycle is still a design
// cycle (DESIGN.md: "no import cycles, type-only ones included"), so this rule builds its own graph.
//
// The graph of the files on disk is read once per process with a light scan of their import and export
// specifiers; the file being linted contributes the edges of its own syntax tree, so an edit is judged
// before it is saved. Only relative specifiers are followed: packages and gen/ cannot import our files.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { relativeImportVisitors, shortestPath } from './graph.js';

const ROOTS = ['core', 'plugins', 'drivers', 'cloud', 'scripts', 'web'];
const SOURCE = /\.(ts|tsx|js|mjs)$/;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** Maps a relative specifier to the source file it names (`./x.js` is `./x.ts` before the build). */
export function resolveSpecifier(fromFile, specifier) {
  const target = resolve(dirname(fromFile), specifier);
  const candidates = target.endsWith('.js')
    ? [target.slice(0, -3) + '.ts', target.slice(0, -3) + '.tsx', target]
    : [target, `${target}.ts`, `${target}.tsx`, join(target, 'index.ts')];
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

function listSources(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listSources(path, out);
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const graphs = new Map();
/** file -> set of files it imports, for every source file under `root`. */
export function diskGraph(root) {
  let graph = graphs.get(root);
  if (graph) return graph;
  graph = new Map();
  for (const top of ROOTS) {
    if (!existsSync(join(root, top))) continue;
    for (const file of listSources(join(root, top), [])) {
      const text = readFileSync(file, 'utf8');
      const edges = new Set();
      for (const match of text.matchAll(SPECIFIER)) {
        const target = resolveSpecifier(file, match[1]);
        if (target) edges.add(target);
      }
      graph.set(file, edges);
    }
  }
  graphs.set(root, graph);
  return graph;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'forbid import cycles between project files, type-only imports included' },
    schema: [],
    messages: { cycle: 'import cycle (type-only imports count too; DESIGN.md): {{path}}. Move the shared part into a file both can import.' },
  },
  create(context) {
    const file = context.filename;
    const root = context.cwd;
    const imports = [];
    return {
      ...relativeImportVisitors(imports),
      'Program:exit'() {
        if (imports.length === 0) return;
        const graph = new Map(diskGraph(root));
        const resolved = imports.map((entry) => ({ ...entry, target: resolveSpecifier(file, entry.specifier) }));
        graph.set(file, new Set(resolved.map((entry) => entry.target).filter(Boolean)));
        for (const { node, target } of resolved) {
          if (!target || target === file) continue;
          const path = shortestPath(target, file, (at) => graph.get(at) ?? []);
          if (path) context.report({ node, messageId: 'cycle', data: { path: [file, ...path].map((p) => relative(root, p)).join(' -> ') } });
        }
      },
    };
  },
};
