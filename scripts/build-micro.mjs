// Bundles platform-micro-server (core/micro/main.ts) into one file, dist/platform-micro-server.mjs, with
// esbuild: every package it uses inside, minified, no native dependency, runnable by Node 20 anywhere
// (`./platform-micro-server.mjs -config machine.json`: the entry's #! line, kept first, sets node's flags
// and GLIBC_TUNABLES, core/micro/main.ts; or `node platform-micro-server.mjs`, without them). Two modules that find files next to the
// sources are swapped for build-time constants: the version (package.json) and the protobuf descriptor
// set that server reflection serves (brotli-compressed into the bundle, ~36 KB as base64); the Prometheus metrics become
// no-ops (core/micro/no-metrics.ts: there is no web port to serve /metrics on). Left out, and loaded only if a
// config asks for them: pigpio and i2c-bus (the Raspberry Pi board's optional native packages, which a
// Pi that uses them installs) and OpenTelemetry (tracing is platform-server's).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';
import { createRequire } from 'node:module';
import { descriptorSubset, protosLinked } from './micro-descriptors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const require = createRequire(import.meta.url);

/** A .proto file as protobufjs JSON, which @grpc/proto-loader's fromJSON reads without touching the disk. */
function protoJson(file, keepCase) {
  const protobuf = require(require.resolve('protobufjs', { paths: [dirname(require.resolve('@grpc/proto-loader'))] }));
  return JSON.stringify(new protobuf.Root().loadSync(file, { keepCase }).toJSON());
}

/**
 * The gRPC health and reflection packages load their .proto files from beside their code at run time;
 * in the bundle they read the same definitions, parsed at build time.
 */
const embeddedProtos = {
  name: 'embedded-protos',
  setup(b) {
    b.onLoad({ filter: /grpc-health-check[\\/]build[\\/]src[\\/]health\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const proto = join(dirname(args.path), '../../proto/health/v1/health.proto');
      const call = "(0, proto_loader_1.loadSync)('health/v1/health.proto', {";
      if (!source.includes(call)) throw new Error(`${args.path}: the health.proto load to embed was not found (grpc-health-check changed)`);
      return { contents: source.replace(call, `(0, proto_loader_1.fromJSON)(${protoJson(proto, true)}, {`), loader: 'js' };
    });
    b.onLoad({ filter: /@grpc[\\/]reflection[\\/]build[\\/]src[\\/]implementations[\\/]reflection-v1(alpha)?\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const version = args.path.includes('v1alpha') ? 'v1alpha' : 'v1';
      const proto = join(dirname(args.path), `../../proto/grpc/reflection/${version}/reflection.proto`);
      const call = 'protoLoader.loadSync(protoPath, constants_1.PROTO_LOADER_OPTS)';
      if (!source.includes(call)) throw new Error(`${args.path}: the reflection.proto load to embed was not found (@grpc/reflection changed)`);
      return { contents: source.replace(call, `protoLoader.fromJSON(${protoJson(proto, false)}, constants_1.PROTO_LOADER_OPTS)`), loader: 'js' };
    });
  },
};

/** Replaces the modules whose code reads files beside the sources, and the metrics (no /metrics here). */
const embedded = (linkedProtos) => ({
  name: 'embedded-files',
  setup(b) {
    // prom-client is loaded with require() at run time; the micro-server has no web port to serve it on.
    b.onResolve({ filter: /(^|[\\/])metrics\.js$/ }, (args) =>
      join(args.resolveDir, args.path) === join(root, 'core/serving/telemetry/metrics.js') ? { path: join(root, 'core/micro/no-metrics.ts') } : undefined,
    );
    b.onLoad({ filter: /core[\\/]version\.ts$/ }, () => {
      const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
      return { contents: `export function platformVersion() { return ${JSON.stringify(version)}; }`, loader: 'ts' };
    });
    b.onLoad({ filter: /core[\\/]serving[\\/]descriptors\.ts$/ }, () => {
      const all = readFileSync(join(root, 'gen/descriptors.binpb'));
      const set = linkedProtos ? descriptorSubset(all, linkedProtos) : all;
      // Brotli at its best setting packs the set about a quarter smaller than gzip -9 (Node 20 reads both).
      const packed = brotliCompressSync(set, {
        params: { [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: set.length },
      }).toString('base64');
      return {
        contents: `import { brotliDecompressSync } from 'node:zlib';\nexport function platformDescriptors() { return brotliDecompressSync(Buffer.from(${JSON.stringify(packed)}, 'base64')); }`,
        loader: 'ts',
      };
    });
  },
});

/**
 * What the bundle leaves out because Node 20 has it built in (core/micro/README.md, "The bundle"): werift's
 * certificate, key and curve packages are replaced by small modules on Node's crypto
 * (core/micro/webrtc-deps/, each tested against the package it replaces), and zod's error messages in
 * 49 languages other than English, which nothing here selects (z.config is never given a locale).
 */
const nodeBuiltIns = {
  name: 'node-built-ins',
  setup(b) {
    const deps = join(root, 'core/micro/webrtc-deps');
    const replaced = {
      '@peculiar/x509': join(deps, 'self-signed.ts'),
      '@fidm/x509': join(deps, 'pem-keys.ts'),
      tweetnacl: join(deps, 'key-exchange.ts'),
      '@noble/curves/p256': join(deps, 'key-exchange.ts'),
    };
    b.onResolve({ filter: /^(@peculiar\/x509|@fidm\/x509|tweetnacl|@noble\/curves\/p256)$/ }, (args) =>
      /[\\/]werift[\\/]/.test(args.importer) ? { path: replaced[args.path] } : undefined,
    );
    // werift takes P-256's premaster secret (the shared point's x) by dropping the first byte of @noble's
    // compressed point; Node's ECDH gives x itself.
    b.onLoad({ filter: /[\\/]werift[\\/]lib[\\/]index\.mjs$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const call = 'const res = p256.getSharedSecret(privateKey, publicKey);\n  const secret = Buffer.from(res).subarray(1);';
      if (!source.includes(call)) throw new Error(`${args.path}: the P-256 shared secret to replace was not found (werift changed)`);
      return { contents: source.replace(call, 'const secret = p256.sharedSecretX(privateKey, publicKey);'), loader: 'js' };
    });
    // pino's transports run in a worker thread (thread-stream); the micro-server has none by design and its
    // log sink (core/logging/sink.ts) uses no transport, so a transport asked for is refused by name.
    b.onResolve({ filter: /^thread-stream$/ }, (args) =>
      /[\\/]pino[\\/]/.test(args.importer) ? { path: 'thread-stream', namespace: 'no-worker-threads' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-worker-threads' }, () => ({
      contents:
        "module.exports = class ThreadStream { constructor() { throw new Error('pino transports run in a worker thread: platform-micro-server has none'); } };",
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), '../locales/index.js'), namespace: 'zod-english' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * What the bundle carries once, or not at all because nothing in it can reach it (core/micro/README.md, "The
 * bundle"; core/micro/bundle.test.ts checks each):
 * - one copy of @grpc/proto-loader 0.7.15: grpc-health-check and @grpc/reflection each install their own,
 *   byte for byte the same build;
 * - is-property's table of every Unicode identifier letter (11 KB): generate-function (werift's wire
 *   codecs, through binary-data) asks it only whether a name may follow a dot, and the names it is given are
 *   ASCII field names; an ASCII test answers the same for those, and a false answer only makes it write
 *   `obj["name"]` instead of `obj.name` (the same code);
 * - zod's JSON Schema writer (z.toJSONSchema and each schema's toJSONSchema(), ~18 KB): zod links it into
 *   every schema class, but no code in the bundle asks for a JSON Schema (platform-server's `-dump-resources`
 *   does, and is not linked). Calling it here throws, naming why.
 */
const oneCopyOrNone = {
  name: 'one-copy-or-none',
  setup(b) {
    const protoLoader = /[\\/]grpc-health-check[\\/]node_modules[\\/]@grpc[\\/]proto-loader[\\/]/;
    b.onResolve({ filter: /^@grpc\/proto-loader$/ }, (args) => {
      if (!/[\\/]grpc-health-check[\\/]/.test(args.importer)) return undefined;
      const health = require.resolve('@grpc/proto-loader', { paths: [args.resolveDir] });
      const reflection = require.resolve('@grpc/proto-loader', { paths: [dirname(require.resolve('@grpc/reflection'))] });
      if (!protoLoader.test(health)) return undefined;
      const version = (main) => JSON.parse(readFileSync(join(main, '../../../package.json'), 'utf8')).version;
      if (version(health) !== version(reflection))
        throw new Error(`@grpc/proto-loader: grpc-health-check has ${version(health)}, @grpc/reflection ${version(reflection)}; check before sharing one copy`);
      return { path: reflection };
    });
    b.onResolve({ filter: /^is-property$/ }, (args) =>
      /[\\/]generate-function[\\/]/.test(args.importer) ? { path: 'is-property', namespace: 'ascii-is-property' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'ascii-is-property' }, () => ({
      contents: 'module.exports = function isProperty(name) { return /^[$A-Z_a-z][$0-9A-Z_a-z]*$/.test(name); };',
      loader: 'js',
    }));
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]core[\\/](to-json-schema|json-schema-processors)\.js$/ }, (args) => {
      const names = [...readFileSync(args.path, 'utf8').matchAll(/^export (?:function|const|let|class) (\w+)/gm)].map((m) => m[1]);
      if (/to-json-schema\.js$/.test(args.path)) names.push('process');
      const refuse = "const refuse = () => { throw new Error('JSON Schema output is not in platform-micro-server (nothing in it asks for one)'); };";
      // The create*Method exports are factories zod calls when a schema's `~standard` is read; the methods they make refuse.
      const exports = names.map((name) => `${/^create\w+Method$/.test(name) ? 'makesRefuse' : 'refuse'} as ${name}`);
      return { contents: `${refuse}\nconst makesRefuse = () => refuse;\nexport { ${exports.join(', ')} };`, loader: 'js' };
    });
  },
};

/**
 * The generated protobuf codecs (gen/, ts-proto) give every message six methods: `encode` and `decode`, which
 * gRPC calls, and `fromJSON`, `toJSON`, `create` and `fromPartial`, which only code that names them calls. No
 * source the bundle links names them (core/micro/bundle.test.ts checks), so the bundle's copy of each
 * generated file has those four left out (about a third of gen/'s code). A generated file that still named one of
 * them after the cut (a codec using another's) stops the build.
 */
export const GENERATED_UNUSED = ['fromJSON', 'toJSON', 'create', 'fromPartial'];

export function withoutUnusedCodecMethods(source, path) {
  // A method of a codec object (two spaces in, ends at `  },`), or the file's own fromJson* helper (ends at `}`).
  const method = new RegExp(`^  (${GENERATED_UNUSED.join('|')})\\b.*[^;]$`);
  const helper = /^function fromJson\w*\(/;
  const kept = [];
  let skipping;
  for (const line of source.split('\n')) {
    if (skipping) {
      if (line === skipping) skipping = undefined;
      continue;
    }
    if (method.test(line)) skipping = '  },';
    else if (helper.test(line)) skipping = '}';
    else kept.push(line);
  }
  if (skipping) throw new Error(`${path}: a generated method to leave out has no end (ts-proto's layout changed)`);
  const out = kept.join('\n');
  const named = new RegExp(`\\.(${GENERATED_UNUSED.join('|')})\\(`).exec(out);
  if (named) throw new Error(`${path}: still calls .${named[1]}( after leaving it out (ts-proto's layout changed)`);
  return out;
}

const generatedCodecs = {
  name: 'generated-codecs',
  setup(b) {
    b.onLoad({ filter: /[\\/]gen[\\/](platform|google)[\\/].*\.ts$/ }, (args) => ({
      contents: withoutUnusedCodecMethods(readFileSync(args.path, 'utf8'), args.path),
      loader: 'ts',
    }));
  },
};

/** Builds the bundle to `outfile`; returns esbuild's metafile (which inputs went in, and their sizes). */
export async function buildMicro(outfile = join(root, 'dist/platform-micro-server.mjs')) {
  // Reflection's descriptors: the protos whose code the bundle links, found by a first build that writes nothing.
  const first = await build(options(outfile, undefined, false));
  const result = await build(options(outfile, protosLinked(first.metafile), true));
  return result.metafile;
}

function options(outfile, linkedProtos, write) {
  return {
    write,
    entryPoints: [join(root, 'core/micro/main.ts')],
    outfile,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(root, 'tsconfig.json'),
    external: ['pigpio', 'i2c-bus', '@opentelemetry/*'],
    // CommonJS packages inside an ES module bundle still call require() for Node's built-ins, and name __dirname.
    banner: {
      js: [
        "import { createRequire as __platformRequire } from 'node:module';",
        "import { fileURLToPath as __platformPath } from 'node:url';",
        'const require = __platformRequire(import.meta.url);',
        'const __filename = __platformPath(import.meta.url);',
        "const __dirname = __platformPath(new URL('.', import.meta.url));",
      ].join(' '),
    },
    plugins: [embedded(linkedProtos), embeddedProtos, nodeBuiltIns, oneCopyOrNone, generatedCodecs],
    metafile: true,
    logLevel: 'warning',
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildMicro(process.argv[2]);
