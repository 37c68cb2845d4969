// The shipped file: dist/platform-micro-server.mjs as scripts/build-micro.mjs builds it, here into a
// folder of its own with nothing beside it (no node_modules), run with plain node. It must hold no
// worker-thread pool, database or native code, serve with one JavaScript thread whatever the number of
// resources, and turn every model it lacks into an error of that resource.
import test from 'ava';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import type { Metafile } from 'esbuild';
import { buildMicro, GENERATED_UNUSED } from '../../scripts/build-micro.mjs';
import { descriptorFiles } from '../../scripts/micro-descriptors.mjs';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../server/testing/grpc.js';
import { listServices } from '../server/testing/reflection.js';
import type { ServingProgram } from '../serving/testing/spawn-serving.js';
import { spawnMicro } from './testing/spawn-micro.js';

let dir: string;
let bundle: string;
let metafile: Metafile;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'platform-micro-bundle-'));
  const built = join(dir, 'built.mjs');
  metafile = await buildMicro(built);
  // Alone in a folder: nothing to resolve packages from.
  bundle = join(mkdtempSync(join(tmpdir(), 'platform-micro-alone-')), 'platform-micro-server.mjs');
  copyFileSync(built, bundle);
});

test('the bundle holds no worker pool, database, ONNX runtime or native code', (t) => {
  const inputs = Object.keys(metafile.inputs);
  for (const banned of [
    'node_modules/piscina/',
    'node_modules/@duckdb/',
    'node_modules/onnxruntime',
    'core/workers/driver-worker',
    'node_modules/pigpio/',
    'node_modules/i2c-bus/',
  ]) {
    t.deepEqual(
      inputs.filter((i) => i.includes(banned)),
      [],
      banned,
    );
  }
  t.deepEqual(
    inputs.filter((i) => i.endsWith('.node')),
    [],
  );
  // The same drivers as platform-server, linked in.
  t.true(inputs.some((i) => i.endsWith('drivers/motor/gpio/driver.ts')));
  t.true(statSync(bundle).size > 0);
  t.regex(readFileSync(bundle, 'utf8').split('\n', 1)[0], /^#!\/usr\/bin\/env -S GLIBC_TUNABLES=\S+ node --lite-mode/);
});

test('the bundle leaves out what Node has built in and what nothing here calls (scripts/build-micro.mjs)', (t) => {
  const inputs = Object.keys(metafile.inputs);
  // werift's certificate, key and curve packages: core/micro/webrtc-deps/ does it with Node's crypto.
  for (const replaced of ['node_modules/@peculiar/', 'node_modules/@fidm/', 'node_modules/@noble/', 'node_modules/tweetnacl/', 'node_modules/asn1js/']) {
    t.deepEqual(
      inputs.filter((i) => i.includes(replaced)),
      [],
      replaced,
    );
  }
  t.true(inputs.some((i) => i.endsWith('core/micro/webrtc-deps/self-signed.ts')));
  // pino's worker-thread transports: no worker threads here.
  t.deepEqual(
    inputs.filter((i) => i.includes('node_modules/thread-stream/')),
    [],
  );
  // zod is imported as a namespace (import * as z), so that the bundle keeps only the parts called: English
  // messages only, no z.compile, no JSON Schema reader.
  // (Of what esbuild read, what it kept: an input tree-shaken away adds no bytes.)
  const kept = Object.entries(Object.values(metafile.outputs)[0].inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path);
  const zod = kept.filter((i) => i.includes('node_modules/zod/'));
  t.true(zod.length > 0);
  t.deepEqual(
    zod.filter((i) => /locales[\\/](?!en\.js|index\.js)/.test(i) || /compile\.js$|from-json-schema\.js$/.test(i)),
    [],
  );
  // Reflection's descriptors: the protos linked (served or called), not the cloud's own.
  const descriptors = Buffer.from(/Buffer\.from\("([A-Za-z0-9+/=]+)","base64"\)/.exec(readFileSync(bundle, 'utf8'))![1], 'base64');
  const names = descriptorFiles(brotliDecompressSync(descriptors)).map((f) => f.name);
  t.true(names.includes('platform/component/motor/v1/motor.proto'));
  t.true(names.includes('platform/rpc/webrtc/v1/signaling.proto'));
  t.false(names.includes('platform/app/mltraining/v1/ml_training.proto'));
  t.log(`bundle ${statSync(bundle).size} bytes, ${(statSync(bundle).size / 2 ** 20).toFixed(3)} MiB`);
});

/** The sources the bundle links that are the platform's own (not packages, not generated code). */
function ownSources(): string[] {
  return Object.entries(Object.values(metafile.outputs)[0].inputs)
    .filter(([path, input]) => input.bytesInOutput > 0 && !path.includes('node_modules/') && !path.startsWith('gen/') && !path.includes(':'))
    .map(([path]) => path);
}

test('the bundle carries one copy of what it needs, and none of what nothing in it calls (scripts/build-micro.mjs)', (t) => {
  const inputs = Object.keys(metafile.inputs);
  const text = readFileSync(bundle, 'utf8');
  // One @grpc/proto-loader 0.7.15 for health and reflection (grpc-health-check's own copy is the same build).
  t.deepEqual(
    inputs.filter((i) => i.includes('grpc-health-check/node_modules/@grpc/proto-loader/')),
    [],
  );
  t.true(inputs.some((i) => i.includes('grpc-health-check/build/src/health.js')));
  // is-property's Unicode table: generate-function gets an ASCII identifier test instead.
  t.deepEqual(
    inputs.filter((i) => i.includes('node_modules/is-property/')),
    [],
  );
  t.true(inputs.includes('ascii-is-property:is-property'));
  // zod's JSON Schema writer: the code is not in the file (its draft names are its strings), and no source here asks for it.
  t.false(text.includes('draft-2020-12'));
  for (const source of ownSources()) t.notRegex(readFileSync(source, 'utf8'), /toJSONSchema|\[['"]~standard['"]\]/, source);
  // The generated codecs' JSON and partial-object methods: no source here names fromJSON, toJSON or
  // fromPartial at all, nor `create` on a value it imports from gen/ (by name or as a namespace's member);
  // ts-proto's fromPartial (a name of its own) is nowhere in the file.
  t.false(text.includes('fromPartial'));
  const unique = GENERATED_UNUSED.filter((m) => m !== 'create').join('|');
  let imports = 0;
  for (const source of ownSources()) {
    const code = readFileSync(source, 'utf8');
    t.notRegex(code, new RegExp(String.raw`\.\s*(${unique})\b|\[\s*['"\x60](${GENERATED_UNUSED.join('|')})['"\x60]\s*\]`), source);
    // Values only: a type (`import type`, `type X`) has no methods at run time.
    const named = [...code.matchAll(/import\s*\{([^}]*)\}\s*from\s*'[./]*gen\/[^']*'/g)].flatMap((m) =>
      m[1]
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name && !name.startsWith('type '))
        .map((name) => name.split(/\s+as\s+/).pop()!),
    );
    const namespaces = [...code.matchAll(/import\s*\*\s*as\s+(\w+)\s+from\s*'[./]*gen\/[^']*'/g)].map((m) => `${m[1]}\\.\\w+`);
    imports += named.length + namespaces.length;
    for (const name of [...named, ...namespaces]) {
      t.notRegex(code, new RegExp(String.raw`\b${name}\s*\.\s*create\b`), `${source}: ${name}`);
    }
  }
  t.true(imports > 10, `${imports} values imported from gen/`);
  const bytes = statSync(bundle).size;
  t.true(bytes <= 1_500_000, `${bytes} bytes: issue 31's target is 1.5 MB, read as 1,500,000 bytes`);
});

function config(resources: number): Record<string, unknown> {
  return {
    network: { bind_address: '127.0.0.1:0' },
    components: [
      ...Array.from({ length: resources }, (_, i) => ({ name: `s${i}`, api: 'core:component:sensor', model: 'fake', attributes: { readings: { i } } })),
      // Models platform-micro-server lacks: errors of these resources only.
      { name: 'pcd', api: 'core:component:camera', model: 'pcd_file', attributes: { path: '/nowhere.pcd' } },
      { name: 'weather', api: 'core:component:sensor', model: 'acme:weather:station' },
    ],
    services: [{ name: 'obstacles', api: 'core:service:vision', model: 'obstacles_depth', attributes: { camera: 'pcd' } }],
    modules: [{ module_id: 'acme:weather', version: '1.0.0' }],
  };
}

async function serve(resources: number): Promise<ServingProgram> {
  const configPath = join(dir, `machine-${resources}.json`);
  writeFileSync(configPath, JSON.stringify(config(resources)));
  return spawnMicro(configPath, dir, { bundle });
}

test('the bundle serves alone; models it lacks are errors of their resources, naming platform-server', async (t) => {
  const program = await serve(3);
  t.teardown(() => program.stop());
  const robot = new RobotServiceClient(program.address, insecure());
  const { resources } = (await call(robot, 'getMachineStatus', {})) as { resources: { name: { name: string }; state: ResourceState; error: string }[] };
  const byName = new Map(resources.map((r) => [r.name.name, r]));
  for (const name of ['s0', 's1', 's2']) t.is(byName.get(name)?.state, ResourceState.RESOURCE_STATE_READY, name);
  t.is(byName.get('pcd')?.state, ResourceState.RESOURCE_STATE_UNHEALTHY);
  t.regex(byName.get('pcd')!.error, /components\[3\]\.model "pcd_file": model "pcd_file" of core:component:camera needs platform-server/);
  t.regex(byName.get('weather')!.error, /model "acme:weather:station" comes from a module, and modules need platform-server/);
  t.regex(byName.get('obstacles')!.error, /model "obstacles_depth" of core:service:vision needs platform-server/);
  t.regex(program.output(), /modules need platform-server: platform-micro-server loads none/);
  const sensors = new SensorServiceClient(program.address, insecure());
  t.deepEqual(((await call(sensors, 'getReadings', { name: 's2' })) as { readings: unknown }).readings, { i: 2 });
  // Reflection and health work from the protos built into the file.
  t.true((await listServices(program.address)).includes('platform.component.sensor.v1.SensorService'));
  t.is(await program.stop(), 0);
});

test('the bundle runs 30 resources on the threads Node starts anyway (no thread per resource)', async (t) => {
  const program = await serve(30);
  t.teardown(() => program.stop());
  const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${program.child.pid}/status`, 'utf8'))![1]);
  // Node's own: the main thread, 4 V8 platform threads, 4 libuv pool threads and a few more; platform-server
  // would add one per resource.
  t.true(threads <= 12, `${threads} threads`);
});

/** What a process was started with: its executable, its argv and its environment, from /proc. */
function started(pid: number): { exe: string; argv: string[]; env: string[] } {
  const list = (file: string) => readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0').slice(0, -1);
  return { exe: realpathSync(`/proc/${pid}/exe`), argv: list('cmdline'), env: list('environ') };
}

test('run as a command, its first line starts node itself with lite mode and a fixed glibc trim threshold', async (t) => {
  const home = mkdtempSync(join(dir, 'home-'));
  const configPath = join(dir, 'machine-command.json');
  writeFileSync(configPath, JSON.stringify(config(1)));
  // spawnMicro runs the bundle itself (its #! line), as the installed platform-micro-server command does.
  const program = await spawnMicro(configPath, home, { bundle, args: ['-debug'] });
  t.teardown(() => program.stop());
  const { exe, argv, env } = started(program.child.pid!);
  // env -S execs node in the same process: no wrapper stands between the caller and the runtime.
  t.is(exe, realpathSync(process.execPath));
  t.deepEqual(argv.slice(1), ['--lite-mode', '--no-expose-wasm', bundle, '-config', configPath, '-debug']);
  t.true(env.includes('GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072'));
  t.true(env.includes(`HOME=${home}`), "the caller's environment is kept");
  const sensors = new SensorServiceClient(program.address, insecure());
  t.deepEqual(((await call(sensors, 'getReadings', { name: 's0' })) as { readings: unknown }).readings, { i: 0 });
  // A signal to the pid the caller holds reaches the runtime, which shuts down cleanly.
  t.is(await program.stop(), 0);
});

test("run as a command, its exit codes and output are the runtime's own", async (t) => {
  const run = promisify(execFile);
  const { stdout } = await run(bundle, ['-version']);
  t.regex(stdout, /^platform-micro-server \d+\.\d+\.\d+/);
  const bad = await run(bundle, ['-no-such-flag']).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  t.is(bad?.code, 2);
  t.regex(bad!.stderr, /no-such-flag/);
});

test('-help lists -help and the call timeout variable; a bad PLATFORM_MICRO_CALL_TIMEOUT_MS stops the start naming it and the rule', async (t) => {
  const run = promisify(execFile);
  const { stdout } = await run(bundle, ['-help']);
  t.regex(stdout, /^ {2}-help /m);
  t.regex(stdout, /PLATFORM_MICRO_CALL_TIMEOUT_MS/);
  t.regex(stdout, /platform-server's other flags/);
  const configPath = join(dir, 'machine-timeout.json');
  writeFileSync(configPath, JSON.stringify(config(1)));
  for (const value of ['abc', '0', '-5']) {
    // A typo must not silently become the 60 s default: the runtime refuses to start, before it serves.
    const bad = await run(bundle, ['-config', configPath], { env: { ...process.env, PLATFORM_MICRO_CALL_TIMEOUT_MS: value }, timeout: 20_000 }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    t.is(bad?.code, 2, value);
    t.is(bad!.stderr.trim(), `PLATFORM_MICRO_CALL_TIMEOUT_MS must be a number >= 1, got '${value}'`);
  }
});
