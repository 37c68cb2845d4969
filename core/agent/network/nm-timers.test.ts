// The minute-long timers of SPEC.md's "Agent behaviour" against NetworkManager's D-Bus API as
// python3-dbusmock serves it (testing/nm-mock.ts), with the real NetworkManagerBackend: provisioning
// is left after retry_connection_timeout_minutes when no user was active (the networks are tried
// again), and device_reboot_after_offline_minutes reboots once per offline spell, never with 0. The
// reboot goes through the injected command runner (FakeRunner): the test asserts on the command the
// agent would run, and the machine is not rebooted.
import test from 'ava';
import { Logger } from '../agent-log.js';
import { parseAgentConfig, type AgentConfigInput } from '../../config/agent-config.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { startNmMock, type NmMock } from '../testing/nm-mock.js';
import { NetworkSupervisor } from './network-supervisor.js';
import { NetworkManagerBackend } from './nm-backend.js';
import { HOTSPOT_ID } from './profiles.js';

const NM = 'org.freedesktop.NetworkManager';
const MIN = 60_000;
const CHECK_MS = 15_000;
const CONNECTIVITY_NONE = 1;
const CONNECTIVITY_FULL = 4;

async function setup(t: { teardown(fn: () => Promise<void>): void }, agent: AgentConfigInput) {
  const started = Date.now();
  const nm = await startNmMock();
  t.teardown(() => nm.stop());
  const dev = (await nm.call('AddWiFiDevice', 'ssi', ['wlan0', 'wlan0', 30])) as string;
  await nm.call('AddAccessPoint', 'ssssuuuyu', [dev, 'ap1', 'lab', '00:11:22:33:44:01', 2, 2437, 54000, 60, 0x100 | 0x8]);
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_NONE]);
  const backend = new NetworkManagerBackend({ bus: nm.bus, activationTimeoutMs: 5000 });
  const clock = new FakeClock();
  const runner = new FakeRunner();
  const sup = new NetworkSupervisor({ backend, clock, runner, logger: new Logger('silent'), minutes: (n) => n * MIN, checkIntervalMs: CHECK_MS });
  t.teardown(() => sup.stop());
  await sup.configure(parseAgentConfig(agent));
  // Real D-Bus calls take real time: the supervisor's checks are run one by one (no start(), no timer),
  // each to its end, with the fake clock moved between them.
  const run = async (ms: number, every = CHECK_MS) => {
    for (let left = ms; left > 0; left -= every) {
      await clock.advance(Math.min(every, left));
      await sup.step();
    }
  };
  await sup.step();
  return { nm, backend, clock, runner, sup, run, started };
}

/**
 * The ids of the connection profiles NetworkManager has active, read over D-Bus (each once: the mock
 * can list an active connection twice).
 */
async function activeIds(nm: NmMock): Promise<string[]> {
  const props = async (path: string) => (await nm.bus.getProxyObject(NM, path)).getInterface('org.freedesktop.DBus.Properties');
  const ids: string[] = [];
  for (const a of ((await (await props('/org/freedesktop/NetworkManager')).Get(NM, 'ActiveConnections')) as { value: string[] }).value) {
    const settings = ((await (await props(a)).Get(`${NM}.Connection.Active`, 'Connection')) as { value: string }).value;
    const raw = (await (await nm.bus.getProxyObject(NM, settings)).getInterface(`${NM}.Settings.Connection`).GetSettings()) as Record<
      string,
      Record<string, { value: unknown }>
    >;
    ids.push(String(raw.connection.id.value));
  }
  return [...new Set(ids)].sort();
}

test.serial('with no user active, provisioning is left after retry_connection_timeout_minutes and the networks are tried again', async (t) => {
  const { nm, clock, sup, run, started } = await setup(t, {
    network_configuration: { offline_before_starting_hotspot_minutes: 1, retry_connection_timeout_minutes: 10, user_idle_minutes: 5 },
    additional_networks: { lab: { type: 'wifi', ssid: 'lab', psk: 'lab-password', priority: 3 } },
  });
  // Minute 0: lab is tried (it stays active in the mock, but NetworkManager reports no connectivity).
  t.deepEqual(await activeIds(nm), ['platform-net-lab']);
  await run(MIN);
  t.is(sup.state, 'provisioning');
  const hotspotAt = clock.now();
  t.true((await activeIds(nm)).includes(HOTSPOT_ID), 'the hotspot is active in NetworkManager');
  await run(10 * MIN - CHECK_MS);
  t.is(sup.state, 'provisioning', 'not before the retry timer');
  t.true((await activeIds(nm)).includes(HOTSPOT_ID));
  await run(CHECK_MS);
  t.is(clock.now() - hotspotAt, 10 * MIN);
  t.is(sup.state, 'offline', 'left at the retry timer: no user was ever active');
  t.false((await activeIds(nm)).includes(HOTSPOT_ID), 'the hotspot is deactivated in NetworkManager');
  const before = sup.lastAttempt?.at;
  await run(CHECK_MS);
  t.like(sup.lastAttempt, { id: 'platform-net-lab', error: undefined }, 'lab is tried again');
  t.not(sup.lastAttempt?.at, before);
  await run(CHECK_MS);
  t.is(sup.state, 'provisioning', 'still no internet: the hotspot is back');
  t.log(`over D-Bus in ${Date.now() - started} ms`);
});

test.serial('offline for device_reboot_after_offline_minutes: `systemctl reboot` through the runner once per offline spell', async (t) => {
  const { nm, clock, runner, sup, run, started } = await setup(t, { network_configuration: { device_reboot_after_offline_minutes: 30 } });
  await run(30 * MIN - CHECK_MS, 5 * MIN);
  t.is(sup.state, 'provisioning', 'the hotspot went up after the offline timer; the reboot timer goes on');
  t.deepEqual(runner.calls, [], 'not before 30 minutes offline');
  await run(CHECK_MS);
  t.is(clock.now(), 30 * MIN);
  t.deepEqual(runner.calls, ['systemctl reboot']);
  await run(60 * MIN, 10 * MIN);
  t.deepEqual(runner.calls, ['systemctl reboot'], 'once: the reboot did not happen (the runner is a fake) and is not asked for again');
  // Online again (NetworkManager's Connectivity), then a new offline spell: a new reboot after 30 minutes.
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_FULL]);
  await run(CHECK_MS);
  t.is(sup.state, 'online');
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_NONE]);
  await run(CHECK_MS); // the spell starts at this check
  await run(30 * MIN - CHECK_MS, 10 * MIN);
  t.deepEqual(runner.calls, ['systemctl reboot']);
  await run(CHECK_MS);
  t.deepEqual(runner.calls, ['systemctl reboot', 'systemctl reboot'], 'a second offline spell, a second reboot at its 30th minute');
  t.log(`over D-Bus in ${Date.now() - started} ms`);
});

test.serial('device_reboot_after_offline_minutes 0: never a reboot, however long offline', async (t) => {
  const { runner, sup, run, started } = await setup(t, { network_configuration: { device_reboot_after_offline_minutes: 0 } });
  await run(3 * MIN);
  t.is(sup.state, 'provisioning');
  await run(2 * 24 * 60 * MIN, 2 * 60 * MIN); // two days offline, checked every two (fake) hours
  t.deepEqual(runner.calls, []);
  t.log(`over D-Bus in ${Date.now() - started} ms`);
});
