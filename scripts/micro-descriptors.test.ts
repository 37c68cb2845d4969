// The descriptor set the micro-server's bundle carries for reflection: a subset of the platform's, cut
// from its wire format, that still decodes as a FileDescriptorSet and holds every file the kept ones import.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { descriptorFiles, descriptorSubset, protosLinked } from './micro-descriptors.mjs';

const all = readFileSync(fileURLToPath(new URL('../gen/descriptors.binpb', import.meta.url)));

test('every file of the set is read, with its imports', (t) => {
  const files = descriptorFiles(all);
  t.is(Buffer.concat(files.map((f) => f.entry)).length, all.length, 'the entries are the whole set');
  const robot = files.find((f) => f.name === 'platform/robot/v1/robot.proto');
  t.truthy(robot);
  t.true(robot!.dependencies.includes('platform/robot/v1/common.proto'));
});

test('a subset keeps the files asked for and what they import, transitively, and decodes', (t) => {
  const subset = descriptorSubset(all, ['platform/component/motor/v1/motor.proto']);
  const kept = descriptorFiles(subset);
  const names = kept.map((f) => f.name);
  t.true(names.includes('platform/component/motor/v1/motor.proto'));
  // Closed under imports: every file a kept file imports is kept.
  for (const file of kept) for (const dependency of file.dependencies) t.true(names.includes(dependency), `${file.name} imports ${dependency}`);
  t.false(names.includes('platform/app/data/v1/data.proto'));
  const definition = loadFileDescriptorSetFromBuffer(subset);
  t.truthy(definition['platform.component.motor.v1.MotorService']);
  t.falsy(definition['platform.app.data.v1.DataService']);
});

test('a file not in the set is refused, naming it', (t) => {
  t.throws(() => descriptorSubset(all, ['no/such.proto']), { message: /no\/such\.proto is not in it/ });
});

test("the protos linked are read from a metafile's generated inputs", (t) => {
  t.deepEqual(protosLinked({ inputs: { 'gen/platform/robot/v1/robot.ts': {}, 'core/x.ts': {}, '../node_modules/y/gen/z.js': {} } }), [
    'platform/robot/v1/robot.proto',
  ]);
});
