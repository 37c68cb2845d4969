// DESIGN.md's import boundaries and the no-cycle rule, pinned: each test lints a source text as if it
// were saved at a real path of the repo, with the project's own eslint.config.js, and checks which rule
// fires and what the message names.
import test from 'ava';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function problems(path: string, text: string) {
  const [result] = await eslint.lintText(text, { filePath: `${root}${path}` });
  return result.messages.filter((m) => m.ruleId?.startsWith('platform/')).map((m) => ({ rule: m.ruleId, message: m.message }));
}

test('a driver that imports core/ fails lint, naming the rule', async (t) => {
  const found = await problems('drivers/motor/gpio/reach.ts', "import { Kernel } from '../../../core/kernel/kernel.js';\nexport const k = Kernel;\n");
  t.is(found.length, 1);
  t.is(found[0].rule, 'platform/boundaries');
  t.regex(found[0].message, /drivers\/motor\/gpio\/reach\.ts imports core\/kernel\/kernel\.js: drivers\/ imports only plugins\/, its own files and packages/);
});

test('a driver may import plugins/, its own files, gen/ and packages', async (t) => {
  const text = [
    "import { defineDriver } from '../../../plugins/contract.js';",
    "import { MotorServiceClient } from '../../../gen/platform/component/motor/v1/motor.js';",
    "import { credentials } from '@grpc/grpc-js';",
    "import { pins } from './pins.js';",
    'export const all = [defineDriver, MotorServiceClient, credentials, pins];',
  ].join('\n');
  t.deepEqual(await problems('drivers/motor/gpio/reach.ts', text), []);
});

test('a driver that imports cloud/ or a type from core/ fails lint', async (t) => {
  const found = await problems(
    'drivers/board/fake/reach.ts',
    "import type { Store } from '../../../cloud/store/store.js';\nimport type { Kernel } from '../../../core/kernel/kernel.js';\nexport type S = Store | Kernel;\n",
  );
  t.deepEqual(
    found.map((f) => f.rule),
    ['platform/boundaries', 'platform/boundaries'],
  );
});

test('plugins/ and its examples never import core/, cloud/ or drivers/', async (t) => {
  for (const target of ['../../core/kernel/kernel.js', '../../cloud/store/store.js', '../../drivers/index.js']) {
    const found = await problems('plugins/examples/reach.ts', `import * as x from '${target}';\nexport { x };\n`);
    t.is(found.length, 1, target);
    t.regex(found[0].message, /plugins\/ \(its examples included\) never imports core\/, cloud\/ or drivers\//);
  }
});

test('cloud/ imports from core/ only the listed folders (config, resource, serving): an unlisted folder is refused, naming the rule', async (t) => {
  // core/kernel and core/datamanager exist and are not listed; core/logging neither. An allow-list
  // refuses them all, also a folder that exists only tomorrow (core/new-feature).
  const unlisted = ['../../core/kernel/machine.js', '../../core/datamanager/driver.js', '../../core/logging/sink.js', '../../core/new-feature/x.js'];
  for (const target of unlisted) {
    const wrong = await problems('cloud/data/reach.ts', `import * as x from '${target}';\nexport const k = x;\n`);
    t.is(wrong.length, 1, target);
    t.is(wrong[0].rule, 'platform/boundaries');
    t.regex(wrong[0].message, /cloud\/ imports from core\/ only core\/config\/, core\/resource\/, core\/serving\//);
  }
  const listed = [
    "import { invalidArgument } from '../../core/serving/status-error.js';",
    "import { checkPartConfig } from '../../core/resource/part-config.js';",
    "import { parseAgentConfig } from '../../core/config/agent-config.js';",
    'export const e = [invalidArgument, checkPartConfig, parseAgentConfig];',
  ].join('\n');
  t.deepEqual(await problems('cloud/data/reach.ts', `${listed}\n`), []);
});

test('an import cycle fails lint even when it is type-only, and the message shows the cycle', async (t) => {
  // cloud/server/cloud-server.ts imports data-services.ts; importing it back closes a cycle.
  const found = await problems('cloud/server/data-services.ts', "import type * as server from './cloud-server.js';\nexport type S = typeof server;\n");
  t.is(found.length, 1);
  t.is(found[0].rule, 'platform/no-cycle');
  t.regex(found[0].message, /cloud\/server\/data-services\.ts -> cloud\/server\/cloud-server\.ts -> cloud\/server\/data-services\.ts/);
});

test('core/ never imports cloud/, a test included: the lint names the rule', async (t) => {
  for (const path of ['core/session/reach.ts', 'core/session/reach.test.ts']) {
    const found = await problems(path, "import { RobotClient } from '../../cloud/client/robot-client.js';\nexport const c = RobotClient;\n");
    t.is(found.length, 1, path);
    t.is(found[0].rule, 'platform/boundaries');
    t.regex(found[0].message, /core\/session\/reach(\.test)?\.ts imports cloud\/client\/robot-client\.js: core\/ never imports cloud\//);
  }
});

test('a .tsx page that imports drivers/ (or core/, plugins/ beyond formats, another page) fails lint, naming the rule', async (t) => {
  const targets = ['../../drivers/camera/fake/driver.js', '../../core/serving/status-error.js', '../../plugins/apis/camera.js', '../cloud/session.js'];
  for (const target of targets) {
    const found = await problems('web/runtime/reach-view.tsx', `import * as x from '${target}';\nexport const View = () => <p>{String(x)}</p>;\n`);
    t.is(found.length, 1, target);
    t.is(found[0].rule, 'platform/boundaries');
    t.regex(
      found[0].message,
      /web\/runtime\/reach-view\.tsx imports .*: web\/ pages import only their own folder, web\/shared\/, plugins\/formats\/ and generated code/,
    );
  }
});

test('a page may import its own folder, web/shared/, plugins/formats/, gen/ and packages', async (t) => {
  const text = [
    "import { useState } from 'preact/hooks';",
    "import { cameraApi } from './api.js';",
    "import { unary } from '../shared/grpc-web-client.js';",
    "import { readPcd } from '../../plugins/formats/pcd/pcd-reader.js';",
    "import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';",
    'export const View = () => <p>{String([useState, cameraApi, unary, readPcd, RobotServiceClient].length)}</p>;',
  ].join('\n');
  t.deepEqual(await problems('web/runtime/reach-view.tsx', text), []);
});

test('a folder cycle fails lint, naming the folders and the imports that make it; tests are left out', async (t) => {
  // core/online imports core/cloud-link (the link); a file of core/cloud-link importing core/online closes
  // a cycle between the folders, though no file cycle (this file is new).
  const text = "import { onlineCredentials } from '../online/credentials.js';\nexport const o = onlineCredentials;\n";
  const found = await problems('core/cloud-link/reach.ts', text);
  t.is(found.length, 1);
  t.is(found[0].rule, 'platform/no-folder-cycle');
  t.regex(
    found[0].message,
    /^folder import cycle: core\/cloud-link -> core\/online -> core\/cloud-link \(core\/cloud-link\/reach\.ts imports core\/online\/credentials\.ts; core\/online\/\S+ imports core\/cloud-link\/\S+\)/,
  );
  // A test may reach across: it is not part of the folders' design.
  t.deepEqual(await problems('core/cloud-link/reach.test.ts', text), []);
});
