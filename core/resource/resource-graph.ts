// The dependency graph of resources: cycle detection (naming each cycle), topological levels for start,
// and the closure of dependents for rebuilds and reverse-order shutdown.

export interface GraphNode {
  name: string;
  dependencies: readonly string[];
}

export interface GraphAnalysis {
  /** For each resource in a cycle, the cycle as a path: a -> b -> a. */
  cycles: Map<string, string[]>;
  /** For each resource, the dependencies that are not in the graph at all. */
  missing: Map<string, string[]>;
  /** Resources by start level: level 0 depends on nothing in the graph. Cyclic resources are left out. */
  levels: string[][];
}

export function analyzeGraph(nodes: readonly GraphNode[]): GraphAnalysis {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const missing = new Map<string, string[]>();
  for (const node of nodes) {
    const absent = node.dependencies.filter((d) => !byName.has(d));
    if (absent.length) missing.set(node.name, absent);
  }
  const cycles = findCycles(nodes, byName);
  // Kahn's algorithm over the acyclic part; an edge to a cyclic or missing node does not hold a node back
  // from its level (such a node starts and reports that its dependency is not ready).
  const pending = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const node of nodes) {
    if (cycles.has(node.name)) continue;
    const deps = node.dependencies.filter((d) => byName.has(d) && !cycles.has(d));
    pending.set(node.name, new Set(deps).size);
    for (const dep of new Set(deps)) dependents.set(dep, [...(dependents.get(dep) ?? []), node.name]);
  }
  const levels: string[][] = [];
  let current = [...pending].filter(([, n]) => n === 0).map(([name]) => name);
  while (current.length) {
    levels.push(current.sort());
    const next: string[] = [];
    for (const name of current) {
      for (const dependent of dependents.get(name) ?? []) {
        const left = (pending.get(dependent) ?? 0) - 1;
        pending.set(dependent, left);
        if (left === 0) next.push(dependent);
      }
    }
    current = next;
  }
  return { cycles, missing, levels };
}

/** Tarjan's strongly connected components; every component of more than one node (or a self loop) is a cycle. */
function findCycles(nodes: readonly GraphNode[], byName: Map<string, GraphNode>): Map<string, string[]> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles = new Map<string, string[]>();
  let counter = 0;

  const visit = (name: string) => {
    index.set(name, counter);
    low.set(name, counter++);
    stack.push(name);
    onStack.add(name);
    for (const dep of byName.get(name)?.dependencies ?? []) {
      if (!byName.has(dep)) continue;
      if (!index.has(dep)) {
        visit(dep);
        low.set(name, Math.min(low.get(name)!, low.get(dep)!));
      } else if (onStack.has(dep)) {
        low.set(name, Math.min(low.get(name)!, index.get(dep)!));
      }
    }
    if (low.get(name) !== index.get(name)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== name);
    const selfLoop = byName.get(name)?.dependencies.includes(name);
    if (component.length > 1 || selfLoop) {
      const members = new Set(component);
      for (const start of component) cycles.set(start, cyclePath(start, members, byName));
    }
  };
  for (const node of nodes) if (!index.has(node.name)) visit(node.name);
  return cycles;
}

/** A shortest path from `start` back to itself inside one strongly connected component. */
function cyclePath(start: string, members: Set<string>, byName: Map<string, GraphNode>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  const seen = new Set<string>();
  while (queue.length) {
    const name = queue.shift()!;
    for (const dep of byName.get(name)?.dependencies ?? []) {
      if (!members.has(dep)) continue;
      if (dep === start) {
        const path = [start];
        for (let at = name; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        path.push(start);
        return path;
      }
      if (!seen.has(dep)) {
        seen.add(dep);
        previous.set(dep, name);
        queue.push(dep);
      }
    }
  }
  return [start, start];
}

/** Every resource that depends on any of `names`, directly or not (not including `names` themselves). */
export function dependentsOf(names: Iterable<string>, nodes: readonly GraphNode[]): Set<string> {
  const direct = new Map<string, string[]>();
  for (const node of nodes) for (const dep of node.dependencies) direct.set(dep, [...(direct.get(dep) ?? []), node.name]);
  const start = new Set(names);
  const found = new Set<string>();
  const queue = [...start];
  while (queue.length) {
    for (const dependent of direct.get(queue.shift()!) ?? []) {
      if (found.has(dependent) || start.has(dependent)) continue;
      found.add(dependent);
      queue.push(dependent);
    }
  }
  return found;
}
