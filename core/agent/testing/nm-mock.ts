// NetworkManager as python3-dbusmock's template serves it, on a private D-Bus daemon (what
// dbus-run-session does): the real D-Bus protocol and NetworkManager's API, without touching the
// machine's network.
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
    child.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}`)));
  });
}

/** `log`: a file where dbusmock records every method call (name and arguments), for call order assertions. */
export async function startNmMock(log?: string): Promise<NmMock> {
  // stderr: as an unprivileged container root it warns that it cannot raise its fd limit.
  const daemon = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const address = await firstLine(daemon);
  // The template serves on the system bus: point that at the private daemon too.
  const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: address, DBUS_SYSTEM_BUS_ADDRESS: address };
  // Debian's python3-dbusmock lives in the system Python, not in a pyenv one.
  const mockProc = spawn('/usr/bin/python3', ['-m', 'dbusmock', '--template', 'networkmanager', ...(log ? ['-l', log] : [])], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const bus = dbus.sessionBus({ busAddress: address });
  for (let i = 0; ; i++) {
    try {
      const obj = await bus.getProxyObject('org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager');
      obj.getInterface('org.freedesktop.NetworkManager');
      break;
    } catch (err) {
      if (i > 200 || mockProc.exitCode !== null) throw new Error(`dbusmock did not come up: ${(err as Error).message}`, { cause: err });
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
      for (const p of [mockProc, daemon]) {
        if (p.exitCode === null && p.signalCode === null) {
          p.kill('SIGTERM');
          await new Promise((r) => p.once('exit', r));
        }
      }
    },
  };
}
