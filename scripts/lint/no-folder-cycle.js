// ESLint rule `platform/no-folder-cycle`: no import cycle between folders, type-only imports included.
// File cycles (platform/no-cycle) can vanish while two folders still lean on each other, file by file
// (cloud/server's kit imported by every feature that cloud/server composes); such folders can only be
// understood, tested and changed together, so this rule forbids it.
//
// A folder is an area's folder: the first two segments of the path (`core/kernel`, `cloud/query`,
// `web/cloud`, `drivers/motor`); a deeper folder is part of it, and a file at an area's top (drivers/index.ts)
// belongs to the area itself. The graph is the design's: tests (`*.test.ts`, `*.test.tsx`) and test helpers
// (`testing/` and `fixtures/` folders) are left out, because a test may reach wherever the boundaries allow
// to set up what it checks without that making the production folders depend on each other.
import { relative, sep } from 'node:path';
import { relativeImportVisitors, shortestPath } from './graph.js';
import { diskGraph, resolveSpecifier } from './no-cycle.js';

/** The folder a file (relative to the repository root) belongs to. */
export function folderOf(file) {
  const parts = file.split('/').slice(0, -1);
  return parts.slice(0, 2).join('/') || '.';
}

/** Whether a file is test code, left out of the folder graph. */
export function isTestCode(file) {
  return /\.test\.tsx?$/.test(file) || /(^|\/)(testing|fixtures)\//.test(file);
}

const folderGraphs = new Map();
/** folder -> folder -> the file edges ({file, target}) that make the folder edge, from the files on disk. */
function diskFolderGraph(root) {
  let graph = folderGraphs.get(root);
  if (graph) return graph;
  graph = new Map();
  const toRoot = (path) => relative(root, path).split(sep).join('/');
  for (const [file, targets] of diskGraph(root)) addEdges(graph, toRoot(file), [...targets].map(toRoot));
  folderGraphs.set(root, graph);
  return graph;
}

function addEdges(graph, file, targets) {
  if (isTestCode(file)) return;
  const from = folderOf(file);
  for (const target of targets) {
    if (isTestCode(target)) continue;
    const to = folderOf(target);
    if (to === from) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    const edges = graph.get(from);
    if (!edges.has(to)) edges.set(to, []);
    edges.get(to).push({ file, target });
  }
}

/** The shortest folder path from `start` back to `goal`, with the file edge of each step, or undefined. */
function pathBack(graph, start, goal) {
  const folders = shortestPath(start, goal, (folder) => graph.get(folder)?.keys() ?? []);
  return folders?.slice(1).map((to, i) => graph.get(folders[i]).get(to)[0]);
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'forbid import cycles between folders (area folders such as core/kernel), tests left out' },
    schema: [],
    messages: {
      cycle:
        'folder import cycle: {{folders}} ({{edges}}). A folder may not depend on one that depends on it; move the shared part into a folder both import (a kit), or compose them in a third.',
    },
  },
  create(context) {
    const root = context.cwd;
    const toRoot = (path) => relative(root, path).split(sep).join('/');
    const file = toRoot(context.filename);
    if (isTestCode(file)) return {};
    const imports = [];
    return {
      ...relativeImportVisitors(imports),
      'Program:exit'() {
        if (imports.length === 0) return;
        const from = folderOf(file);
        // The disk graph, with this file's edges as its syntax tree has them now.
        const graph = new Map();
        for (const [folder, edges] of diskFolderGraph(root)) {
          const mine = new Map();
          for (const [to, list] of edges) {
            const others = list.filter((edge) => edge.file !== file);
            if (others.length) mine.set(to, others);
          }
          graph.set(folder, mine);
        }
        const resolved = imports.map((entry) => ({ ...entry, target: resolveSpecifier(context.filename, entry.specifier) }));
        addEdges(graph, file, resolved.map((entry) => entry.target && toRoot(entry.target)).filter(Boolean));
        const reported = new Set();
        for (const { node, target } of resolved) {
          if (!target) continue;
          const targetFile = toRoot(target);
          const to = folderOf(targetFile);
          if (to === from || isTestCode(targetFile) || reported.has(to)) continue;
          const back = pathBack(graph, to, from);
          if (!back) continue;
          reported.add(to);
          const steps = [{ file, target: targetFile }, ...back];
          context.report({
            node,
            messageId: 'cycle',
            data: {
              folders: [from, ...steps.map((s) => folderOf(s.target))].join(' -> '),
              edges: steps.map((s) => `${s.file} imports ${s.target}`).join('; '),
            },
          });
        }
      },
    };
  },
};
