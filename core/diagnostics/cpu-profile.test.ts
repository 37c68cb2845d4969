import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuProfile, CpuProfileError } from './cpu-profile.js';
import { parseCpuProfile } from './testing/cpu-profile-shape.js';

function busy(): number {
  let x = 0;
  for (let i = 0; i < 2e6; i++) x += Math.sqrt(i);
  return x;
}

test('stop writes a .cpuprofile with nodes, samples and timeDeltas, and only the file itself', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-cpuprofile-'));
  const path = join(dir, 'run.cpuprofile');
  const profile = await CpuProfile.start(path);
  busy();
  await Promise.all([profile.stop(), profile.stop()]);
  const parsed = parseCpuProfile(readFileSync(path, 'utf8'));
  t.true(parsed.samples.length > 0);
  t.deepEqual(readdirSync(dir), ['run.cpuprofile']);
});

test('a path that cannot be written is an error at start naming the flag', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-cpuprofile-'));
  const missing = await t.throwsAsync(CpuProfile.start(join(dir, 'missing', 'x.cpuprofile')), {
    instanceOf: CpuProfileError,
    message: /^-cpuprofile .*missing\/x\.cpuprofile: folder .* does not exist$/,
  });
  t.is(missing?.errorCode, 'CORE_ERR_CPU_PROFILE');
  t.is(
    (await t.throwsAsync(CpuProfile.start(dir), { instanceOf: CpuProfileError, message: /^-cpuprofile .*: is a directory/ }))?.errorCode,
    'CORE_ERR_CPU_PROFILE',
  );
  if (process.getuid?.() !== 0) {
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    t.is(
      (await t.throwsAsync(CpuProfile.start(join(locked, 'x.cpuprofile')), { instanceOf: CpuProfileError, message: /is not writable$/ }))?.errorCode,
      'CORE_ERR_CPU_PROFILE',
    );
  }
});
