// -cpuprofile end to end: the real program writes a loadable profile however it is stopped.
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { parseCpuProfile } from '../diagnostics/testing/cpu-profile-shape.js';
import { call, insecure } from './testing/grpc.js';
import { spawnRuntime } from './testing/spawn-runtime.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const run = promisify(execFile);
const sensor = { name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { v: 1 } } };

for (const how of ['SIGTERM', 'SIGINT', 'Shutdown'] as const) {
  test(`a stop by ${how} writes a .cpuprofile with nodes, samples and timeDeltas`, async (t) => {
    const path = join(mkdtempSync(join(tmpdir(), 'platform-cpuprofile-')), 'runtime.cpuprofile');
    const runtime = await spawnRuntime({ components: [sensor] }, { args: ['-cpuprofile', path] });
    t.false(existsSync(path), 'written at the end, not before');
    if (how === 'Shutdown') await call(new RobotServiceClient(runtime.address, insecure()), 'shutdown', {});
    else runtime.process.kill(how);
    t.is(await runtime.exited, 0);
    const profile = parseCpuProfile(readFileSync(path, 'utf8'));
    t.true(profile.samples.length > 0);
  });
}

test('a -cpuprofile path that cannot be written stops the start with an error naming the flag', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-cpuprofile-'));
  const config = join(dir, 'config.json');
  (await import('node:fs')).writeFileSync(config, '{}');
  const err = await t.throwsAsync(
    run(process.execPath, ['--import', 'tsx', MAIN, '-config', config, '-cpuprofile', join(dir, 'no', 'such', 'folder', 'x.cpuprofile')], {
      env: { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data') },
    }),
  );
  t.is((err as { code?: number }).code, 2);
  t.regex((err as unknown as { stderr: string }).stderr, /^-cpuprofile .*x\.cpuprofile: folder .*folder does not exist\n$/);
});
