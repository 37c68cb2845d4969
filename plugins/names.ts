// Resource and model names. An api is `<namespace>:<kind>:<subtype>` with kind `component` or `service`;
// a resource's full name is `<api>/<name>`, e.g. `core:component:sensor/temp`.
import { ConfigError } from './validation.js';

export type ResourceKind = 'component' | 'service';

export interface Api {
  readonly namespace: string;
  readonly kind: ResourceKind;
  readonly subtype: string;
}

const PART = /^[A-Za-z0-9_-]+$/;

/** Parses an api triplet, or throws a ConfigError at `path` that names the broken rule. */
export function parseApi(text: string, path = 'api'): Api {
  const parts = text.split(':');
  if (parts.length !== 3) throw new ConfigError(path, 'must have the shape <namespace>:<kind>:<subtype>', text);
  const [namespace, kind, subtype] = parts;
  if (!PART.test(namespace)) throw new ConfigError(path, 'namespace must be letters, digits, _ or -', text);
  if (kind !== 'component' && kind !== 'service') throw new ConfigError(path, 'kind must be component or service', text);
  if (!PART.test(subtype)) throw new ConfigError(path, 'subtype must be letters, digits, _ or -', text);
  return { namespace, kind, subtype };
}

/** Built-in models use a bare name (`fake`); modular models use `<namespace>:<module>:<model>`. */
export function checkModelName(model: string, path = 'model'): void {
  const parts = model.split(':');
  const ok = (parts.length === 1 || parts.length === 3) && parts.every((p) => PART.test(p));
  if (!ok) throw new ConfigError(path, 'must be a model name (fake) or a triplet <namespace>:<module>:<model>', model);
}

/** Logger names are dotted: platform.components.motor.left. */
export const resourceLoggerName = (api: Api, name: string): string => `platform.${api.kind}s.${api.subtype}.${name}`;
