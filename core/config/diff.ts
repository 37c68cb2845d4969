// What changed between two configs, for the reconfiguration log. Paths and keys are always shown and so
// are ordinary values (a diff that says only "<redacted>" says nothing); what may be a secret is redacted
// unless -reveal-sensitive-config-diffs is set, since logs travel further than configs: the `cloud`
// section, any value under a key that names a secret (secret, password, passkey, token, credential, auth,
// private, or ending in key: api_key, apiKey), and the user:password of a URL.
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

/** A key whose value may be a secret (matched on its words: `api_key`, `wifiPassword`, `auth_token`). */
const SECRET_WORD = /secret|passw|passkey|passphrase|token|credential|auth|private/i;
const isSecretKey = (k: string) => SECRET_WORD.test(k) || /(^|[_\-.])key(s)?$/i.test(k) || /[a-z]Key$/.test(k);

/** Whether a path (`components[cam].attributes.api_key`) leads to a value that may be a secret. */
export function secretPath(path: string): boolean {
  const keys = path.split(/\.|\[[^\]]*\]/).filter(Boolean);
  return keys[0] === 'cloud' || keys.some(isSecretKey);
}

/** A value with the secrets inside it redacted: secret keys' values and URLs' user:password. */
function redacted(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/(\w[\w+.-]*:\/\/)[^\s/@]+@/g, `$1${REDACTED}@`);
  if (Array.isArray(value)) return value.map(redacted);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isSecretKey(k) ? REDACTED : redacted(v)]));
  return value;
}

export function describeChanges(changes: ConfigChange[], reveal: boolean): string[] {
  const show = (v: unknown, c: ConfigChange) => (reveal ? JSON.stringify(v) : secretPath(c.path) ? REDACTED : JSON.stringify(redacted(v)));
  return changes.map((c) =>
    c.kind === 'added'
      ? `+ ${c.path}: ${show(c.after, c)}`
      : c.kind === 'removed'
        ? `- ${c.path}: ${show(c.before, c)}`
        : `~ ${c.path}: ${show(c.before, c)} -> ${show(c.after, c)}`,
  );
}
