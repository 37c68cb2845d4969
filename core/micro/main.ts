#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072 node --lite-mode --no-expose-wasm
// platform-micro-server: the lightweight machine runtime for small Linux boards, in one thread
// (core/micro/README.md). Same config file, same credentials file and same gRPC APIs as platform-server.
//
// The first line (kept by esbuild as the bundle's first line, so the installed `platform-micro-server`
// command and `./platform-micro-server.mjs` start this way) trades speed for memory before the process
// exists, where nothing inside it could (core/micro/README.md, "Memory"): V8's lite mode (no JIT compiler:
// its code and its compiled functions are never paged in or made; WebAssembly, which needs a JIT, off) and
// glibc's trim threshold fixed at its 128 KiB default (a fixed threshold does not rise, so the parser's
// freed memory goes back to the system). `env -S` splits the line (coreutils 8.30 and later); the line
// stays under 128 bytes, the kernels' old limit. `node platform-micro-server.mjs` runs without them.
import './v8-heap.js';
import 'reflect-metadata';
import { InvalidConfigError } from '../config/machine-config.js';
import { flag, FlagError, parseFlags, stringFlag, type FlagName, type Flags } from '../server/flags.js';
import { platformVersion } from '../version.js';
import { callTimeoutMs, composeMicro, type MicroServer } from './compose.js';
import { failOwningDriver } from './in-process-hosting.js';
import { answerThroughCloud, type CloudAnswerer } from '../webrtc/cloud-answerer.js';

/** The flags of platform-server that the micro-server acts on; the others are accepted and said to do nothing here. */
const SUPPORTED: readonly FlagName[] = [
  'config',
  'debug',
  'log-file',
  'no-tls',
  'allow-insecure-creds',
  'reveal-sensitive-config-diffs',
  'webrtc',
  'help',
  'version',
];

function usage(): string {
  return [
    'Usage: platform-micro-server -config <file> [flags]',
    '',
    'The lightweight runtime for small Linux boards (core/micro/README.md). Flags:',
    '  -config <filename>                 machine config, or the part credentials file of an online machine',
    '  -debug                             debug logs for everything',
    '  -log-file <filename>               also write logs to this file (rotated)',
    '  -no-tls                            serve without TLS even if certificates are configured',
    '  -allow-insecure-creds              allow the part credentials over plaintext to a remote cloud',
    '  -reveal-sensitive-config-diffs     show values in logged config diffs',
    '  -webrtc=false                      do not answer WebRTC (on the gRPC port, nor through the cloud; default on)',
    '  -version                           print the version and exit',
    '  -help                              show this help',
    '',
    "platform-server's other flags are accepted and ignored (said so on stderr). Environment:",
    '  PLATFORM_MICRO_CALL_TIMEOUT_MS     how long a call into a driver may take before DEADLINE_EXCEEDED (default 60000)',
    "  PLATFORM_ONLINE_DIR                an online machine's config cache and log queue (default ~/.platform/online)",
    '',
  ].join('\n');
}

/**
 * An error nobody caught would end the process. When a driver's code threw it (from its own timer or
 * promise), only that resource fails and is rebuilt, as a crashed worker is in platform-server; an error
 * of the runtime's own code still ends the process, loudly, for the agent to restart it.
 */
function attributeUncaughtErrors(): void {
  const onError = (kind: string) => (error: unknown) => {
    if (failOwningDriver(error)) return;
    process.stderr.write(`platform-micro-server: ${kind}: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', onError('uncaught exception'));
  process.on('unhandledRejection', onError('unhandled rejection'));
}

async function main(argv: string[]): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`${err.message.replace('platform-server', 'platform-micro-server')}\n${usage()}`);
    return 2;
  }
  if (flag(flags, 'help')) {
    process.stdout.write(usage());
    return 0;
  }
  if (flag(flags, 'version')) {
    process.stdout.write(`platform-micro-server ${platformVersion()}\n`);
    return 0;
  }
  const configPath = stringFlag(flags, 'config');
  if (!configPath) {
    process.stderr.write(`-config is required: the machine config file (see examples/fake.json)\n${usage()}`);
    return 2;
  }
  let timeoutMs: number;
  try {
    timeoutMs = callTimeoutMs();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  attributeUncaughtErrors();
  const server: MicroServer = await composeMicro({
    configPath,
    logFile: stringFlag(flags, 'log-file'),
    debug: flag(flags, 'debug'),
    noTls: flag(flags, 'no-tls'),
    allowInsecureCreds: flag(flags, 'allow-insecure-creds'),
    revealDiffs: flag(flags, 'reveal-sensitive-config-diffs'),
    webrtc: flag(flags, 'webrtc'),
    callTimeoutMs: timeoutMs,
  });
  const { runtime, online, machine, sink } = server;
  let cloudAnswerer: CloudAnswerer | undefined;
  const finish = async () => {
    cloudAnswerer?.stop();
    await runtime.shutdown();
    await online?.close();
  };
  let exiting = false;
  const stop = (code: number) => {
    if (exiting) return;
    exiting = true;
    void finish().then(
      () => process.exit(code),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  try {
    await online?.init();
    const address = await runtime.start(() => stop(0));
    const ignored = flags.given.filter((name) => !SUPPORTED.includes(name));
    if (ignored.length)
      process.stderr.write(`platform-micro-server: ${ignored.map((f) => `-${f}`).join(', ')}: not supported here (platform-server only); ignored\n`);
    online?.started(machine, { version: platformVersion(), configProblem: () => runtime.configProblem });
    if (online) runtime.onConfigSettled = () => online.reportSoon();
    // Online, it also answers offers signaled through the cloud, over the machine's one link (as platform-server).
    if (!exiting) {
      const log = sink.logger('platform.webrtc', () => runtime.levelOf('platform.webrtc'));
      cloudAnswerer = answerThroughCloud(online?.cloudLink, flag(flags, 'webrtc'), () => runtime.webrtcAnswerer, log);
    }
    // The agent and scripts wait for this line; a shutdown that began during start-up suppresses it.
    if (!exiting) process.stdout.write(`platform-micro-server serving on ${address}\n`);
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
    process.stderr.write(`platform-micro-server failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
