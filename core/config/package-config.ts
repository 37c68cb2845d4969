// The `packages` section of a machine config: what to install and under which name attributes refer to it.
import * as z from 'zod';

export const packageEntry = z.strictObject({
  /** How attributes refer to it: ${packages.NAME}. */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  /** `<organization id>/<model name>`. */
  package: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}\/[A-Za-z0-9_.:-]{1,128}$/, 'must be <organization id>/<model name>'),
  /** A model_version, or "latest". */
  version: z
    .string()
    .regex(/^[A-Za-z0-9._+:-]{1,128}$/, 'must be a version or "latest"')
    .default('latest'),
  type: z.literal('ml_model', { message: 'must be "ml_model"' }),
});

export type PackageEntry = z.output<typeof packageEntry>;
export const packagesSection = z
  .array(packageEntry)
  .default([])
  .superRefine((entries, ctx) => {
    const seen = new Set<string>();
    entries.forEach((e, i) => {
      if (seen.has(e.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `${JSON.stringify(e.name)} is used by another package` });
      seen.add(e.name);
    });
  });

const reference = /\$\{packages\.([A-Za-z0-9_-]+)\}/g;

/** The package names an attribute tree refers to. */
export function referencedPackages(value: unknown, found = new Set<string>()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(reference)) found.add(m[1]);
  else if (Array.isArray(value)) value.forEach((v) => referencedPackages(v, found));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => referencedPackages(v, found));
  return found;
}

/** Replaces every ${packages.NAME} by the folder of that installed package; an unknown name throws. */
export function substitutePackages<T>(value: T, folders: Record<string, string>, path = 'attributes'): T {
  if (typeof value === 'string') {
    return value.replace(reference, (_, name: string) => {
      const folder = folders[name];
      if (folder === undefined)
        throw new Error(`${path}: \${packages.${name}} names no installed package (installed: ${Object.keys(folders).join(', ') || 'none'})`);
      return folder;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v, i) => substitutePackages(v, folders, `${path}[${i}]`)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitutePackages(v, folders, `${path}.${k}`)])) as T;
  }
  return value;
}
