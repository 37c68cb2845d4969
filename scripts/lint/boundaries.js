// ESLint rule `platform/boundaries`: DESIGN.md's three rules for who may import whom.
//   - drivers/ imports only plugins/, its own files and packages;
//   - plugins/ (its examples included) never imports core/, cloud/ or drivers/;
//   - cloud/ imports from core/ only through core/shared/.
// A driver knows only the plugin contract; when something must cross a line, widen the contract, not
// the reach. Paths are judged after resolving the specifier, so `../../core/x.js` and a deeper
// `../../../core/x.js` are the same reach. gen/ (the code generated from proto/) is the wire contract,
// as much a package as @grpc/grpc-js, so every area may import it.
import { relative, resolve, dirname, sep } from 'node:path';

/** Each rule: files under `area` may not import files under any of `forbidden` unless under `allowed`. */
export const BOUNDARIES = [
  { area: 'drivers', forbidden: ['core', 'cloud', 'scripts'], allowed: [], rule: 'drivers/ imports only plugins/, its own files and packages' },
  {
    area: 'plugins',
    forbidden: ['core', 'cloud', 'drivers', 'scripts'],
    allowed: [],
    rule: 'plugins/ (its examples included) never imports core/, cloud/ or drivers/',
  },
  { area: 'cloud', forbidden: ['core'], allowed: ['core/shared'], rule: 'cloud/ imports from core/ only through core/shared/' },
];

const under = (path, folder) => path === folder || path.startsWith(`${folder}/`);

/** The broken rule for an import of `target` from `file` (both relative to the repo root), or undefined. */
export function brokenBoundary(file, target) {
  for (const boundary of BOUNDARIES) {
    if (!under(file, boundary.area)) continue;
    const reach = boundary.forbidden.find((folder) => under(target, folder));
    if (reach && !boundary.allowed.some((folder) => under(target, folder))) return boundary.rule;
  }
  return undefined;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: "enforce DESIGN.md's import boundaries between core/, plugins/, drivers/ and cloud/" },
    schema: [],
    messages: { boundary: '{{file}} imports {{target}}: {{rule}} (DESIGN.md). Move the shared code or widen the plugin contract.' },
  },
  create(context) {
    const root = context.cwd;
    const toRoot = (path) => relative(root, path).split(sep).join('/');
    const file = toRoot(context.filename);
    const check = (node) => {
      const source = node.source;
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = toRoot(resolve(dirname(context.filename), source.value));
      const rule = brokenBoundary(file, target);
      if (rule) context.report({ node: source, messageId: 'boundary', data: { file, target, rule } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
