// system_configuration: the journald drop-in, apt's unattended-upgrade files (checked by apt-config
// itself), the files under a temporary install root, the commands through the runner, and log
// forwarding of records read from a real journal file written by systemd-journal-remote.
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { JOURNALD_DROP_IN, journaldDropIn } from './journald.js';
import { LogForwarder, parseForwardFilter, parseJournalLine, selectRecord } from './log-forwarding.js';
import { SystemConfigurator } from './system-configuration.js';
import { AUTO_UPGRADES_FILE, UNATTENDED_UPGRADES_FILE, autoUpgradesFile, parseAptPolicyOrigins, unattendedUpgradesFile } from './unattended-upgrades.js';

const POLICY = `Package files:
 100 /var/lib/dpkg/status
     release a=now
 500 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
     release v=12,o=Debian,a=oldstable-security,n=bookworm-security,l=Debian-Security,c=main,b=amd64
     origin deb.debian.org
 500 http://deb.debian.org/debian-security bookworm-security/contrib amd64 Packages
     release v=12,o=Debian,a=oldstable-security,n=bookworm-security,l=Debian-Security,c=contrib,b=amd64
     origin deb.debian.org
 500 http://deb.debian.org/debian bookworm/main amd64 Packages
     release v=12.15,o=Debian,a=oldstable,n=bookworm,l=Debian,c=main,b=amd64
     origin deb.debian.org
 500 https://repo.example.com/apt stable/main amd64 Packages
     release o=Example Robotics,a=stable,n=robots,c=main,b=amd64
     origin repo.example.com
Pinned packages:
`;

function tempRoot(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-system-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function capture(level: 'debug' | 'info' = 'info'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: new Logger(level, { name: 'platform-agent' }, (l) => lines.push(JSON.parse(l) as Record<string, unknown>)), lines };
}

const system = (sc: Record<string, unknown>) => parseAgentConfig({ system_configuration: sc }).system_configuration;

test('the journald drop-in, byte for byte, for 512, 0 and -1', (t) => {
  const head = '# Written by platform-agent (system_configuration); edits are overwritten.\n[Journal]\n';
  t.is(journaldDropIn({ systemMaxUseMegabytes: 512, runtimeMaxUseMegabytes: 512 }), `${head}SystemMaxUse=512M\nRuntimeMaxUse=512M\n`);
  t.is(journaldDropIn({ systemMaxUseMegabytes: 0, runtimeMaxUseMegabytes: 0 }), `${head}SystemMaxUse=0M\nRuntimeMaxUse=0M\n`);
  t.is(journaldDropIn({ systemMaxUseMegabytes: -1, runtimeMaxUseMegabytes: -1 }), head);
  t.is(journaldDropIn({ systemMaxUseMegabytes: -1, runtimeMaxUseMegabytes: 64 }), `${head}RuntimeMaxUse=64M\n`);
});

test('origins come from apt-cache policy; security keeps only the security codenames', (t) => {
  const origins = parseAptPolicyOrigins(POLICY);
  t.deepEqual(origins, [
    { origin: 'Debian', codename: 'bookworm-security' },
    { origin: 'Debian', codename: 'bookworm' },
    { origin: 'Example Robotics', codename: 'robots' },
  ]);
  const all = unattendedUpgradesFile('all', origins);
  t.true(all.includes('"origin=Example Robotics,codename=robots";'), 'custom repositories are included');
  const security = unattendedUpgradesFile('security', origins);
  t.true(security.includes('"origin=Debian,codename=bookworm-security";'));
  t.false(security.includes('codename=bookworm"'));
  t.false(security.includes('robots'));
});

test('apt-config accepts both apt files and reads the intended values', (t) => {
  const dir = tempRoot(t);
  const check = (name: string, content: string) => {
    const file = join(dir, name);
    writeFileSync(file, content);
    const res = spawnSync('apt-config', ['-c', file, 'dump'], { encoding: 'utf8' });
    t.is(res.status, 0, res.stderr);
    t.is(res.stderr, '');
    return res.stdout;
  };
  const origins = parseAptPolicyOrigins(POLICY);
  const dumpAll = check('50-all', unattendedUpgradesFile('all', origins));
  t.regex(dumpAll, /Unattended-Upgrade::Origins-Pattern:: "origin=Debian,codename=bookworm-security";/);
  t.regex(dumpAll, /Unattended-Upgrade::Origins-Pattern:: "origin=Example Robotics,codename=robots";/);
  const dumpSecurity = check('50-security', unattendedUpgradesFile('security', origins));
  t.notRegex(dumpSecurity, /codename=bookworm";/);
  t.regex(check('20-on', autoUpgradesFile('all')), /APT::Periodic::Unattended-Upgrade "1";/);
  t.regex(check('20-off', autoUpgradesFile('disable')), /APT::Periodic::Update-Package-Lists "0";/);
});

test('apply writes every file under the install root and restarts journald only when the drop-in changes', async (t) => {
  const root = tempRoot(t);
  const runner = new FakeRunner();
  runner.answers.set('apt-cache policy', { stdout: POLICY });
  runner.answers.set('dpkg-query -W -f=${Status} unattended-upgrades', { stdout: 'install ok installed' });
  const { logger } = capture();
  const sys = new SystemConfigurator({ root, runner, logger });
  const first = await sys.apply(system({ os_auto_upgrade_type: 'security', logging_journald_system_max_use_megabytes: 100 }));
  t.deepEqual(first.errors, []);
  t.deepEqual(first.changedFiles, [JOURNALD_DROP_IN, UNATTENDED_UPGRADES_FILE, AUTO_UPGRADES_FILE]);
  t.true(readFileSync(join(root, JOURNALD_DROP_IN), 'utf8').includes('SystemMaxUse=100M\nRuntimeMaxUse=512M\n'));
  t.true(readFileSync(join(root, UNATTENDED_UPGRADES_FILE), 'utf8').includes('codename=bookworm-security'));
  t.deepEqual(runner.calls, ['systemctl restart systemd-journald', 'dpkg-query -W -f=${Status} unattended-upgrades', 'apt-cache policy']);

  runner.calls.length = 0;
  const again = await sys.apply(system({ os_auto_upgrade_type: 'security', logging_journald_system_max_use_megabytes: 100 }));
  t.deepEqual(again.changedFiles, []);
  t.false(runner.calls.includes('systemctl restart systemd-journald'), 'an unchanged drop-in restarts nothing');
});

test('an empty os_auto_upgrade_type touches no apt file; disable switches periodic upgrades off; a missing package is installed', async (t) => {
  const root = tempRoot(t);
  const runner = new FakeRunner();
  const sys = new SystemConfigurator({ root, runner, logger: capture().logger });
  await sys.apply(system({}));
  t.false(existsSync(join(root, AUTO_UPGRADES_FILE)));
  t.false(runner.calls.some((c) => c.startsWith('apt')));
  await sys.apply(system({ os_auto_upgrade_type: 'disable' }));
  t.is(readFileSync(join(root, AUTO_UPGRADES_FILE), 'utf8'), autoUpgradesFile('disable'));
  t.false(existsSync(join(root, UNATTENDED_UPGRADES_FILE)));
  runner.answers.set('dpkg-query -W -f=${Status} unattended-upgrades', { code: 1, stdout: '' });
  await sys.apply(system({ os_auto_upgrade_type: 'all' }));
  t.true(runner.calls.includes('apt-get install -y unattended-upgrades'));
});

test('a failing command is reported naming the setting, and the other settings still apply', async (t) => {
  const root = tempRoot(t);
  const runner = new FakeRunner();
  runner.answers.set('systemctl restart systemd-journald', { code: 1, stderr: 'Failed to restart' });
  runner.answers.set('apt-cache policy', { stdout: POLICY });
  runner.answers.set('dpkg-query -W -f=${Status} unattended-upgrades', { stdout: 'install ok installed' });
  const sys = new SystemConfigurator({ root, runner, logger: capture().logger });
  const report = await sys.apply(system({ os_auto_upgrade_type: 'all' }));
  t.deepEqual(report.errors, ['system_configuration.logging_journald: systemctl restart systemd-journald exited with 1: Failed to restart']);
  t.true(existsSync(join(root, UNATTENDED_UPGRADES_FILE)));
});

test('disable_system_configuration leaves the system alone', async (t) => {
  const root = tempRoot(t);
  const runner = new FakeRunner();
  const sys = new SystemConfigurator({ root, runner, logger: capture().logger });
  const report = await sys.apply(system({ os_auto_upgrade_type: 'all', forward_system_logs: 'all' }), true);
  t.deepEqual(report.changedFiles, []);
  t.deepEqual(runner.calls, []);
  t.deepEqual(runner.streams, []);
});

test('forward filters: identifiers, units, exclusions, level and the agent itself', (t) => {
  const rec = (identifier: string, priority = 6, unit = '', pid = 7) => ({ message: 'm', identifier, unit, priority, pid });
  const sshd = parseForwardFilter('sshd, NetworkManager')!;
  t.true(selectRecord(rec('sshd'), sshd, 'info', 1));
  t.true(selectRecord(rec('', 6, 'NetworkManager.service'), sshd, 'info', 1));
  t.false(selectRecord(rec('cron'), sshd, 'info', 1));
  t.false(selectRecord(rec('sshd', 7), sshd, 'info', 1), 'debug records need the debug level');
  t.true(selectRecord(rec('sshd', 7), sshd, 'debug', 1));
  const allButCron = parseForwardFilter('all,-CRON')!;
  t.true(selectRecord(rec('kernel'), allButCron, 'info', 1));
  t.false(selectRecord(rec('CRON'), allButCron, 'info', 1));
  t.false(selectRecord(rec('kernel', 6, '', 1), allButCron, 'info', 1), "the agent's own pid");
  t.false(selectRecord(rec('node', 6, 'platform-agent.service'), allButCron, 'info', 1), "the agent's own unit");
  t.true(parseForwardFilter('-CRON')!.all, 'only exclusions select everything else');
  t.is(parseForwardFilter(''), undefined);
  t.is(parseJournalLine('not json'), undefined);
  t.is(parseJournalLine(JSON.stringify({ MESSAGE: [104, 105], PRIORITY: '3' }))?.message, 'hi');
});

test('log forwarding forwards and filters the records of a real journal file', async (t) => {
  const dir = tempRoot(t);
  const boot = '0123456789abcdef0123456789abcdef';
  const entry = (n: number, id: string, prio: number, msg: string) =>
    `__REALTIME_TIMESTAMP=${1700000000000000 + n * 1000000}\n__MONOTONIC_TIMESTAMP=${n * 1000}\n_BOOT_ID=${boot}\nMESSAGE=${msg}\nPRIORITY=${prio}\nSYSLOG_IDENTIFIER=${id}\n_PID=${100 + n}\n\n`;
  const exportText =
    entry(1, 'sshd', 6, 'Accepted publickey') +
    entry(2, 'CRON', 6, 'session opened') +
    entry(3, 'kernel', 3, 'usb 1-1: disconnect') +
    entry(4, 'sshd', 7, 'debug detail');
  const journal = join(dir, 'test.journal');
  execFileSync('/lib/systemd/systemd-journal-remote', [`--output=${journal}`, '-'], { input: exportText, stdio: ['pipe', 'ignore', 'ignore'] });
  const runner = new FakeRunner();
  runner.streamSource = ['journalctl', ['--file', journal, '-o', 'json']];
  const { logger, lines } = capture();
  const fwd = new LogForwarder({ runner, logger, setting: 'all,-CRON', ownPid: 1, retryMs: 5 });
  t.teardown(() => fwd.stop());
  const code = await fwd.start()!.exited;
  t.is(code, 0);
  // journalctl ending on its own is followed again (here: the file is read a second time).
  for (let i = 0; i < 200 && fwd.forwarded < 4; i++) await new Promise((r) => setTimeout(r, 10));
  await fwd.stop();
  t.true(fwd.forwarded >= 4, String(fwd.forwarded));
  t.true(runner.streams.length >= 2);
  t.true(
    runner.streams.every((c) => c === 'journalctl -f -o json -n 0'),
    'the agent follows the live journal',
  );
  t.deepEqual(
    lines
      .filter((l) => l.journal)
      .slice(0, 2)
      .map((l) => [l.msg, l.level, (l.journal as { identifier: string }).identifier, (l.journal as { time: number }).time]),
    [
      ['Accepted publickey', 30, 'sshd', 1700000001000],
      ['usb 1-1: disconnect', 50, 'kernel', 1700000003000],
    ],
  );
});
