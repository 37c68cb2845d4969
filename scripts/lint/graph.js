// What the two cycle rules (no-cycle, no-folder-cycle) share: the search for the way back that closes a
// cycle, and the collection of a file's relative import specifiers from its syntax tree.

/**
 * The shortest path from `start` to `goal` as a list of nodes (both ends included), or undefined.
 * `next(node)` lists a node's successors; breadth-first, so the reported cycle is the shortest one.
 */
export function shortestPath(start, goal, next) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === goal) {
      const path = [];
      for (let at = node; at !== undefined; at = previous.get(at)) path.unshift(at);
      return path;
    }
    for (const following of next(node)) {
      if (!previous.has(following)) {
        previous.set(following, node);
        queue.push(following);
      }
    }
  }
  return undefined;
}

/**
 * Visitors that collect the file's relative specifiers ({node, specifier}) into `imports`: static and
 * dynamic imports and re-exports. Packages and gen/ are not followed; they cannot import our files.
 */
export function relativeImportVisitors(imports) {
  const collect = (node) => {
    const source = node.source;
    if (source && typeof source.value === 'string' && source.value.startsWith('.')) imports.push({ node, specifier: source.value });
  };
  return { ImportDeclaration: collect, ExportNamedDeclaration: collect, ExportAllDeclaration: collect, ImportExpression: collect };
}
