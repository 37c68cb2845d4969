import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { ownedByOtherLiveProcess, ownerTag, processStartTime } from './file-owner.js';

/** A live process that is not this one, for as long as the test runs. */
async function otherProcess(t: { teardown(fn: () => void): void }): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  await once(child, 'spawn');
  return child.pid!;
}

test("this process' tag holds its pid and its start time from /proc", (t) => {
  const start = processStartTime(process.pid);
  t.regex(start ?? '', /^\d+$/);
  t.is(ownerTag(), `p${process.pid}s${start}`);
});

test('a file of a live other process is owned; of this process or without a tag, it is not', async (t) => {
  const pid = await otherProcess(t);
  t.deepEqual(ownedByOtherLiveProcess(`/c/2026-11-27T07-00-00-000Z-000001-abcd1234-p${pid}s${processStartTime(pid)}`), { pid });
  t.deepEqual(ownedByOtherLiveProcess(`/c/2026-11-27T07-00-00-000Z-000001-abcd1234-p${pid}sx`), { pid }, 'no start time: the pid check only');
  t.is(ownedByOtherLiveProcess(`/c/2026-11-27T07-00-00-000Z-000001-abcd1234-${ownerTag()}`), undefined);
  t.is(ownedByOtherLiveProcess('/c/2026-11-27T07-00-00-000Z-000001-abcd1234'), undefined);
});

test('a reused pid (another start time) or a dead pid does not own the file', async (t) => {
  const pid = await otherProcess(t);
  const start = Number(processStartTime(pid));
  t.is(ownedByOtherLiveProcess(`/c/x-p${pid}s${start - 1}`), undefined, 'the pid now belongs to a newer process');
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const [code] = await once(child, 'exit');
  t.is(code, 0);
  t.is(ownedByOtherLiveProcess(`/c/x-p${child.pid}s1`), undefined, 'the process has exited');
});
