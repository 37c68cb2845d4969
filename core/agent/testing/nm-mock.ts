// NetworkManager as python3-dbusmock's template serves it, on a private bus started by dbus-run-session
// (as the developers' guide says): the real D-Bus protocol and NetworkManager's API, without touching the
// machine's network. dbus-run-session runs the mock with a fresh session daemon and stops that daemon
// when the mock exits; the mock prints the bus address first, so the test can connect to it. The
// template serves on the system bus, so that is pointed at the same private daemon.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import dbus from 'dbus-next';
import type { MessageBus } from 'dbus-next';

export interface NmMock {
  bus: MessageBus;
  /**
   * Calls the template's org.freedesktop.DBus.Mock methods (AddWiFiDevice 'sssu'... see the template);
   * they are not in its introspection data, so they go as plain messages.
   */
  call(member: string, signature: string, body: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => resolve(l.trim()));
    child.once('exit', (code) => reject(new Error(`dbus-run-session exited with ${code}`)));
  });
}

/** `log`: a file where dbusmock records every method call (name and arguments), for call order assertions. */
export async function startNmMock(log?: string): Promise<NmMock> {
  // Debian's python3-dbusmock lives in the system Python, not in a pyenv one. detached: its own process
  // group, which stop() ends if the session does not end with the mock.
  // The shell's pid is the mock's after exec: stopping the mock lets dbus-run-session stop its daemon.
  const script =
    'printf "%s %s\\n" "$$" "$DBUS_SESSION_BUS_ADDRESS"; DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SESSION_BUS_ADDRESS" exec /usr/bin/python3 -m dbusmock --template networkmanager "$@"';
  const session = spawn('dbus-run-session', ['--', '/bin/sh', '-c', script, 'nm-mock', ...(log ? ['-l', log] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // Kept for the error of a mock that does not come up (as an unprivileged container root the daemon
  // also warns here that it cannot raise its fd limit).
  let stderr = '';
  session.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const [mockPid, address] = (
    await firstLine(session).catch((err: Error) => {
      throw new Error(`${err.message}: ${stderr}`);
    })
  ).split(' ');
  const bus = dbus.sessionBus({ busAddress: address });
  for (let i = 0; ; i++) {
    try {
      const obj = await bus.getProxyObject('org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager');
      obj.getInterface('org.freedesktop.NetworkManager');
      break;
    } catch (err) {
      if (i > 200 || session.exitCode !== null) throw new Error(`dbusmock did not come up: ${(err as Error).message}\n${stderr}`, { cause: err });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    bus,
    call: async (member, signature, body) => {
      const reply = await bus.call(
        new dbus.Message({
          destination: 'org.freedesktop.NetworkManager',
          path: '/org/freedesktop/NetworkManager',
          interface: 'org.freedesktop.DBus.Mock',
          member,
          signature,
          body,
        }),
      );
      return reply?.body[0];
    },
    stop: async () => {
      bus.disconnect();
      if (session.exitCode === null && session.signalCode === null) {
        const exited = new Promise((r) => session.once('exit', r));
        const signal = (pid: number) => {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // already gone
          }
        };
        signal(Number(mockPid));
        // The whole group only if the session does not end by itself (its daemon is then left to init).
        const late = setTimeout(() => signal(-session.pid!), 5000);
        await exited;
        clearTimeout(late);
      }
    },
  };
}
