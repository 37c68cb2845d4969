// ESLint rule `platform/boundaries`: who may import whom (DESIGN.md's three rules, and the ones that keep
// the machine, the cloud and the pages apart).
//   - drivers/ imports only plugins/, its own files and packages;
//   - plugins/ (its examples included) never imports core/, cloud/ or drivers/;
//   - cloud/ imports from core/ only the folders of CLOUD_MAY_IMPORT (an allow-list: a new core/ folder is
//     closed to the cloud until it is listed there);
//   - core/ never imports cloud/ (a test that starts both programs lives in scripts/e2e/);
//   - a web page (web/<page>/, .tsx included) imports only its own folder, web/shared/, the plugin
//     contract's file formats (plugins/formats/) and generated code; web/shared/ only itself.
// A driver knows only the plugin contract; when something must cross a line, widen the contract, not
// the reach. Paths are judged after resolving the specifier, so `../../core/x.js` and a deeper
// `../../../core/x.js` are the same reach. gen/ (the code generated from proto/) is the wire contract,
// as much a package as @grpc/grpc-js, so every area may import it.
import { relative, resolve, dirname, sep } from 'node:path';

/**
 * The core/ folders the cloud may import, and why each: the cloud validates a part's config with the
 * runtime's own code (the schema and entries in core/config/, the model registry, resolution and graph in
 * core/resource/), and both programs serve through the same kit (core/serving/: status errors and their
 * bounds, the standard gRPC services, the web server and gRPC-Web forwarder, telemetry, the WebRTC
 * transport, mDNS, settings from the environment, durable files, and the test helpers that start either
 * program). Nothing else of core/ (the kernel, the runtime, the workers, the machine's features) is the
 * cloud's to reach.
 */
export const CLOUD_MAY_IMPORT = ['core/config', 'core/resource', 'core/serving'];

/** Each rule: files under `area` may not import files under any of `forbidden` unless under `allowed`. */
export const BOUNDARIES = [
  { area: 'drivers', forbidden: ['core', 'cloud', 'scripts'], allowed: [], rule: 'drivers/ imports only plugins/, its own files and packages' },
  {
    area: 'plugins',
    forbidden: ['core', 'cloud', 'drivers', 'scripts'],
    allowed: [],
    rule: 'plugins/ (its examples included) never imports core/, cloud/ or drivers/',
  },
  { area: 'cloud', forbidden: ['core'], allowed: CLOUD_MAY_IMPORT, rule: `cloud/ imports from core/ only ${CLOUD_MAY_IMPORT.map((f) => `${f}/`).join(', ')}` },
  { area: 'core', forbidden: ['cloud'], allowed: [], rule: 'core/ never imports cloud/ (tests that start both programs live in scripts/e2e/)' },
];

/** What a web page may reach besides its own folder: shared page code, file formats, the wire contract. */
export const WEB_ALLOWED = ['web/shared', 'plugins/formats', 'gen'];
export const WEB_RULE = 'web/ pages import only their own folder, web/shared/, plugins/formats/ and generated code (gen/)';

/** The broken web rule for an import of `target` from a file under web/, or undefined. */
function brokenWebBoundary(file, target) {
  const page = file.split('/').slice(0, 2).join('/');
  if (under(target, page) || WEB_ALLOWED.some((folder) => under(target, folder))) return undefined;
  return WEB_RULE;
}

const under = (path, folder) => path === folder || path.startsWith(`${folder}/`);

/** The broken rule for an import of `target` from `file` (both relative to the repo root), or undefined. */
export function brokenBoundary(file, target) {
  if (under(file, 'web')) return brokenWebBoundary(file, target);
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
    docs: { description: "enforce DESIGN.md's import boundaries between core/, plugins/, drivers/, cloud/ and web/" },
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
