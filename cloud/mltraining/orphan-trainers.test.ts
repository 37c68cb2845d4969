// After a kill -9 of the cloud, a trainer's group can outlive its leader: the restart must end what is
// left of it even though no process in it still names the job on its command line.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOrphans, jobIdVariable } from './orphan-trainers.js';
import { isRunning } from './testing/processes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

/** Starts a group whose leader (sh) exits at once, leaving a `sleep` child behind in the group. */
async function leftoverGroup(cwd: string, env: Record<string, string>): Promise<{ leader: number; child: number }> {
  const sh = spawn('/bin/sh', ['-c', 'sleep 300 >/dev/null 2>&1 & echo $!'], {
    cwd,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  sh.stdout!.on('data', (d) => (out += d));
  await new Promise((resolve) => sh.once('close', resolve));
  return { leader: sh.pid!, child: Number(out.trim()) };
}

test('the group of a dead trainer leader is ended through the marks its children inherit', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'orphans-'));
  const jobId = 'job-3c1d0a8e-orphan';
  const work = join(root, 'work', jobId);
  await mkdir(work, { recursive: true });
  const byCwd = await leftoverGroup(work, {});
  const byEnv = await leftoverGroup(root, { [jobIdVariable]: jobId });
  const unrelated = await leftoverGroup(root, { [jobIdVariable]: 'another-job' });
  t.teardown(async () => {
    for (const p of [byCwd, byEnv, unrelated])
      try {
        process.kill(-p.leader, 'SIGKILL');
      } catch {
        /* gone */
      }
    await rm(root, { recursive: true, force: true });
  });
  t.false(isRunning(byCwd.leader));
  t.true(isRunning(byCwd.child) && isRunning(byEnv.child));

  killOrphans(jobId, undefined);
  await waitFor('the leftover children to die', () => !isRunning(byCwd.child) && !isRunning(byEnv.child), 30_000);
  t.true(isRunning(unrelated.child), "another job's processes are left alone");
});

test('the recorded group of a dead leader is ended even when its children carry no mark', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'orphans-'));
  const group = await leftoverGroup(root, {});
  const other = await leftoverGroup(root, {});
  t.teardown(async () => {
    for (const p of [group, other])
      try {
        process.kill(-p.leader, 'SIGKILL');
      } catch {
        /* gone */
      }
    await rm(root, { recursive: true, force: true });
  });
  killOrphans('job-without-marks', group.leader);
  await waitFor('the leftover child to die', () => !isRunning(group.child), 30_000);
  t.true(isRunning(other.child));
});

test("the group of whatever started the cloud is spared, even where it carries the job's marks", async (t) => {
  // A shell working in the job's folder (an operator looking at it, say) starts a process in a session of
  // its own that ends the job's orphans, as a cloud started from that shell would: the shell's group
  // carries the mark (its working folder) but is the caller's ancestor's, so it lives.
  const root = await mkdtemp(join(tmpdir(), 'orphans-'));
  const jobId = 'job-5b2e9f1c-ancestor';
  const work = join(root, 'work', jobId);
  await mkdir(work, { recursive: true });
  const module = new URL('./orphan-trainers.ts', import.meta.url).href;
  const script = `import(${JSON.stringify(module)}).then((m) => { m.killOrphans(${JSON.stringify(jobId)}, undefined); console.log('swept'); })`;
  // tsx by its full address: the child's working folder (the job's) has no node_modules to find it in.
  const tsx = import.meta.resolve('tsx');
  const shell = spawn('/bin/sh', ['-c', 'setsid "$0" --import "$2" -e "$1"; sleep 1; echo alive', process.execPath, script, tsx], {
    cwd: work,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(async () => {
    try {
      process.kill(-shell.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    await rm(root, { recursive: true, force: true });
  });
  let out = '';
  shell.stdout!.on('data', (d) => (out += d));
  const [code, signal] = (await new Promise((resolve) => shell.once('close', (...args) => resolve(args)))) as [number | null, string | null];
  t.is(signal, null, `the shell was killed: ${out}`);
  t.is(code, 0);
  t.deepEqual(out.trim().split('\n'), ['swept', 'alive']);
});
