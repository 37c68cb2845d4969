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

test('cloud/ imports core/ only through core/shared/', async (t) => {
  const wrong = await problems('cloud/data/reach.ts', "import { Kernel } from '../../core/kernel/kernel.js';\nexport const k = Kernel;\n");
  t.is(wrong.length, 1);
  t.regex(wrong[0].message, /cloud\/ imports from core\/ only through core\/shared\//);
  const right = await problems(
    'cloud/data/reach.ts',
    "import { invalidArgument } from '../../core/shared/status-error.js';\nexport const e = invalidArgument;\n",
  );
  t.deepEqual(right, []);
});

test('an import cycle fails lint even when it is type-only, and the message shows the cycle', async (t) => {
  // cloud/server/extensions.ts imports extension-contract.ts; importing it back closes a cycle.
  const found = await problems(
    'cloud/server/extension-contract.ts',
    "import type { createExtensions } from './extensions.js';\nexport type F = typeof createExtensions;\n",
  );
  t.is(found.length, 1);
  t.is(found[0].rule, 'platform/no-cycle');
  t.regex(found[0].message, /cloud\/server\/extension-contract\.ts -> cloud\/server\/extensions\.ts -> cloud\/server\/extension-contract\.ts/);
});
