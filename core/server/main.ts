#!/usr/bin/env node
// platform-server: the machine runtime.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { InvalidConfigError } from '../config/machine-config.js';
import { CpuProfile, CpuProfileError } from '../diagnostics/cpu-profile.js';
import { Machine } from '../kernel/machine.js';
import { ONLINE_MACHINE } from '../online/online-machine.js';
import { LOG_SINK } from '../logging/sink.js';
import { platformVersion } from '../version.js';
import { composeRuntime, registryWithBuiltins } from './compose.js';
import { dumpResources, registerInstalledModules } from './dump-resources.js';
import { flag, FlagError, parseFlags, stringFlag, usage, type Flags } from './flags.js';
import { advertiseRuntime, type MdnsAdvertiser } from './mdns-advertiser.js';
import { hostname } from 'node:os';
import type { FtdcCapture } from '../diagnostics/ftdc/capture.js';
import { startFtdc } from './ftdc.js';
import { startTelemetryOutput, type TelemetryOutput } from './telemetry-output.js';
import { networkCheck } from './network-check.js';
import { Runtime } from './runtime.js';
import { answerThroughCloud, type CloudAnswerer } from '../webrtc/cloud-answerer.js';

/** module_dir of a config file, without validating the rest (a dump must work with a broken config too). */
function readModuleDir(configPath: string): string | undefined {
  try {
    const dir = (JSON.parse(readFileSync(configPath, 'utf8')) as { module_dir?: unknown }).module_dir;
    return typeof dir === 'string' ? dir : undefined;
  } catch {
    return undefined;
  }
}

async function main(argv: string[]): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`${err.message}\n${usage()}`);
    return 2;
  }
  if (flag(flags, 'help')) {
    process.stdout.write(usage());
    return 0;
  }
  if (flag(flags, 'version')) {
    process.stdout.write(`platform-server ${platformVersion()}\n`);
    return 0;
  }
  const dumpPath = stringFlag(flags, 'dump-resources');
  if (dumpPath) {
    const registry = registryWithBuiltins();
    if (!flag(flags, 'untrusted-env')) {
      const configPath = stringFlag(flags, 'config');
      const moduleDir = configPath ? readModuleDir(configPath) : undefined;
      await registerInstalledModules(registry, { env: process.env.PLATFORM_PLUGINS_DIR, moduleDir, configPath }, (line) => process.stderr.write(`${line}\n`));
    }
    dumpResources(registry, dumpPath);
    return 0;
  }
  if (flag(flags, 'network-check')) {
    return networkCheck(stringFlag(flags, 'config'), (line) => process.stdout.write(`${line}\n`));
  }
  const configPath = stringFlag(flags, 'config');
  if (!configPath) {
    process.stderr.write(`-config is required: the machine config file (see examples/fake.json)\n${usage()}`);
    return 2;
  }
  // Started first, so that the profile covers start-up too.
  let profile: CpuProfile | undefined;
  const profilePath = stringFlag(flags, 'cpuprofile');
  if (profilePath !== undefined) {
    try {
      profile = await CpuProfile.start(profilePath);
    } catch (err) {
      if (!(err instanceof CpuProfileError)) throw err;
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
  }
  let telemetry: TelemetryOutput | undefined;
  if (flag(flags, 'output-telemetry')) {
    try {
      telemetry = startTelemetryOutput();
    } catch (err) {
      process.stderr.write(`-output-telemetry: ${(err as Error).message}\n`);
      return 2;
    }
  }
  const container = await composeRuntime(flags, configPath);
  const runtime = container.resolve(Runtime);
  const online = container.isRegistered(ONLINE_MACHINE) ? container.resolve(ONLINE_MACHINE) : undefined;
  let ftdc: FtdcCapture | undefined;
  let mdns: MdnsAdvertiser | undefined;
  let cloudAnswerer: CloudAnswerer | undefined;
  /** Every way out ends here: capture stops first (the machine is going away), the profile is written last. */
  let written = true;
  const finish = async (): Promise<boolean> => {
    ftdc?.stop();
    try {
      // The goodbye goes out while the server still answers: a client that saw it stops dialling.
      await mdns?.stop();
      cloudAnswerer?.stop();
      await runtime.shutdown();
      await online?.close();
      await telemetry?.stop();
    } finally {
      await profile?.stop().catch((err: Error) => {
        // The log sink is closed by now.
        process.stderr.write(`-cpuprofile ${profile?.path}: the profile could not be written: ${err.message}\n`);
        written = false;
      });
    }
    return written;
  };
  let exiting = false;
  const stop = (code: number) => {
    if (exiting) return;
    exiting = true;
    void finish().then(
      (written) => process.exit(written ? code : 1),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  try {
    // Online: the cached config, and one attempt at the cloud's, before the runtime starts with it.
    await online?.init();
    // start() reads the config before its first await; capture starts right after, so that the config's
    // `log` rules already govern its logger, and samples the start-up of the resources.
    const starting = runtime.start(() => stop(0));
    if (flag(flags, 'ftdc')) ftdc = startFtdc(container.resolve(Machine), container.resolve(LOG_SINK), () => runtime.levelOf('platform.ftdc'));
    const address = await starting;
    online?.started(container.resolve(Machine), { version: platformVersion(), configProblem: () => runtime.configProblem });
    if (online) runtime.onConfigSettled = () => online.reportSoon();
    // -webrtc (default true): an online machine also answers offers signaled through its cloud.
    if (!exiting) {
      const log = container.resolve(LOG_SINK).logger('platform.webrtc', () => runtime.levelOf('platform.webrtc'));
      cloudAnswerer = answerThroughCloud(online?.cloudLink, flag(flags, 'webrtc'), () => runtime.webrtcAnswerer, log);
    }
    // The agent and scripts wait for this line; a shutdown that began during start-up suppresses it.
    if (!exiting) process.stdout.write(`platform-server serving on ${address}\n${runtime.webUrl ? `platform-server web page on ${runtime.webUrl}\n` : ''}`);
    if (!exiting && !flag(flags, 'disable-mdns')) {
      mdns = await advertiseRuntime({
        address: () => runtime.address ?? address,
        partName: online?.config.partName,
        hostName: hostname(),
        // TXT `webrtc` when the runtime answers WebRTC signaling (-webrtc, the default).
        webrtc: flag(flags, 'webrtc'),
        log: container.resolve(LOG_SINK).logger('platform.mdns', () => runtime.levelOf('platform.mdns')),
      });
      if (exiting) await mdns.stop();
    }
  } catch (err) {
    if (!(err instanceof InvalidConfigError)) throw err;
    process.stderr.write(`${err.report()}\n`);
    await finish();
    return 1;
  }
  return -1; // keep running
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    process.stderr.write(`platform-server failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
