// What changed between two configs, for the reconfiguration log. Values are redacted unless
// -reveal-sensitive-config-diffs is set: configs hold secrets (cloud credentials, network passkeys,
// attributes of third-party drivers) and logs travel further than configs.
export interface ConfigChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

const REDACTED = '<redacted>';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Resource entries are matched by name, so that reordering a list is not reported as a change. */
function keyed(list: unknown[]): Map<string, unknown> | undefined {
  const names = list.map((e) => (isObject(e) && typeof e.name === 'string' ? e.name : undefined));
  if (names.some((n) => n === undefined) || new Set(names).size !== names.length) return undefined;
  return new Map(list.map((e, i) => [names[i]!, e]));
}

export function diffConfigs(before: unknown, after: unknown, path = ''): ConfigChange[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (Array.isArray(before) && Array.isArray(after)) {
    const a = keyed(before);
    const b = keyed(after);
    if (a && b) {
      const changes: ConfigChange[] = [];
      for (const [name, value] of a) changes.push(...diffConfigs(value, b.get(name), `${path}[${name}]`));
      for (const [name, value] of b) if (!a.has(name)) changes.push({ path: `${path}[${name}]`, kind: 'added', after: value });
      return changes;
    }
  }
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffConfigs(before[k], after[k], path ? `${path}.${k}` : k));
  }
  if (before === undefined) return [{ path, kind: 'added', after }];
  if (after === undefined) return [{ path, kind: 'removed', before }];
  return [{ path, kind: 'changed', before, after }];
}

export function describeChanges(changes: ConfigChange[], reveal: boolean): string[] {
  const show = (v: unknown) => (reveal ? JSON.stringify(v) : REDACTED);
  return changes.map((c) =>
    c.kind === 'added'
      ? `+ ${c.path}: ${show(c.after)}`
      : c.kind === 'removed'
        ? `- ${c.path}: ${show(c.before)}`
        : `~ ${c.path}: ${show(c.before)} -> ${show(c.after)}`,
  );
}
