// Test helper: a network the mDNS tests control. Preferred: a network namespace holding one end of a veth
// pair, with the runtime inside (bound to the wildcard) and the test on the other end, so the multicast
// really crosses an interface. Where namespaces are not permitted (a container without CAP_SYS_ADMIN),
// the fallback is loopback in the test's own namespace; `mode` and `why` say which was used, and the
// tests put it in their titles.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface MdnsLink {
  mode: 'veth in a network namespace' | 'loopback';
  /** Why the fallback was taken. */
  why?: string;
  /** bind_address for the runtime. */
  bindAddress: string;
  /** The IPv4 address of the test's interface (the client's `interfaces`). */
  clientInterface: string;
  /** The address the runtime is reached on. */
  serverAddress: string;
  /** spawnRuntime's `prefix`: runs the runtime inside the namespace. */
  prefix: string[];
  close(): Promise<void>;
}

const ip = (...args: string[]) => run('ip', args);

/** Namespaces left behind by a test process that died: named after its pid. */
async function removeStale(): Promise<void> {
  const { stdout } = await ip('netns', 'list');
  for (const match of stdout.matchAll(/^pmdns(\d+)\b/gm)) {
    const pid = Number(match[1]);
    try {
      process.kill(pid, 0);
    } catch {
      await ip('netns', 'del', `pmdns${pid}`).catch(() => undefined);
    }
  }
}

async function vethLink(): Promise<MdnsLink> {
  const pid = process.pid;
  const ns = `pmdns${pid}`;
  const [outer, inner] = [`pmd${pid}a`, `pmd${pid}b`];
  const net = `10.231.${(pid % 250) + 1}`;
  await removeStale();
  await ip('netns', 'add', ns);
  try {
    await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    await ip('link', 'set', inner, 'netns', ns);
    await ip('addr', 'add', `${net}.1/24`, 'dev', outer);
    await ip('link', 'set', outer, 'up');
    await ip('-n', ns, 'addr', 'add', `${net}.2/24`, 'dev', inner);
    await ip('-n', ns, 'link', 'set', inner, 'up');
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
  } catch (err) {
    await ip('link', 'del', outer).catch(() => undefined);
    await ip('netns', 'del', ns).catch(() => undefined);
    throw err;
  }
  return {
    mode: 'veth in a network namespace',
    bindAddress: '0.0.0.0:0',
    clientInterface: `${net}.1`,
    serverAddress: `${net}.2`,
    prefix: ['ip', 'netns', 'exec', ns],
    // Deleting the namespace deletes its end of the pair, and with it the other end.
    close: () => ip('netns', 'del', ns).then(() => undefined),
  };
}

/** The veth link when this machine permits it, else loopback (with the reason). */
export async function mdnsLink(): Promise<MdnsLink> {
  try {
    return await vethLink();
  } catch (err) {
    const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim().split('\n')[0];
    return {
      mode: 'loopback',
      why,
      bindAddress: '127.0.0.1:0',
      clientInterface: '127.0.0.1',
      serverAddress: '127.0.0.1',
      prefix: [],
      close: async () => undefined,
    };
  }
}
