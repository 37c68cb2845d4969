// platform-server's command line (SPEC.md "Runtime process options"). The flags are Go-style: one dash
// (two are accepted too), `-flag value` or `-flag=value`, and booleans as `-flag` or `-flag=false`.
import { FlagError } from '../serving/errors.js';
export { FlagError };

interface FlagSpec {
  type: 'boolean' | 'string';
  help: string;
  default?: boolean;
  /** Accepted and reported as not supported yet: it has its own issue. */
  pending?: boolean;
  value?: string;
}

export const FLAG_SPECS = {
  'allow-insecure-creds': { type: 'boolean', help: 'Allow credentials to be sent over plaintext' },
  config: { type: 'string', value: 'filename', help: 'Configuration file holding machine cloud credentials or a full configuration' },
  cpuprofile: {
    type: 'string',
    value: 'file',
    help: 'Write a CPU profile of the main thread to this file (.cpuprofile, for Chrome DevTools) when the runtime stops',
  },
  debug: { type: 'boolean', help: 'Enable debug logs (overrides every log setting)' },
  'disable-mdns': { type: 'boolean', help: 'Disable server discovery through multicast DNS (mDNS / DNS-SD, _rpc._tcp.local)' },
  'dump-resources': { type: 'string', value: 'filepath', help: 'Write all resource registrations as a sorted JSON array to the path, then exit' },
  ftdc: { type: 'boolean', default: true, help: 'Enable full-time data capture for diagnostics (into $PLATFORM_FTDC_DIR or ~/.platform/diagnostics.data)' },
  'log-file': { type: 'string', value: 'filename', help: 'Also write logs to this file, rotated daily (at UTC midnight) and at 10 MB, 10 files kept' },
  'network-check': { type: 'boolean', help: 'Only run normal network checks, print them, and exit (0 when all pass)' },
  'no-tls': { type: 'boolean', help: 'Serve without TLS even if certificates are configured' },
  'output-telemetry': {
    type: 'boolean',
    help: 'Print telemetry to stderr: the metrics (as served at /metrics) every $PLATFORM_TELEMETRY_INTERVAL_MS (default 15000) and at stop, and each span when the config has tracing.enabled',
  },
  'reveal-sensitive-config-diffs': { type: 'boolean', help: 'Show values in logged configuration diffs (redacted by default)' },
  shareddir: { type: 'string', value: 'directory-name', help: "Serve the control page's static assets from this folder instead of the built-in ones" },
  'untrusted-env': { type: 'boolean', help: 'Disable processes and shell from running in an untrusted environment (no module is loaded)' },
  version: { type: 'boolean', help: 'Print the version and exit' },
  webprofile: { type: 'boolean', help: 'Add GET /debug/profile?seconds=N to the web port: a .cpuprofile of the main thread over N seconds' },
  webrtc: {
    type: 'boolean',
    default: true,
    help: "Answer WebRTC connections (gRPC over a data channel): through the cloud's signaling when online, and SignalingService on the gRPC port",
  },
  help: { type: 'boolean', help: 'Show this help' },
} satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof FLAG_SPECS;

export interface Flags {
  values: Partial<Record<FlagName, string | boolean>>;
  /** The flags the user gave explicitly, in order. */
  given: FlagName[];
}

const specs: Record<string, FlagSpec> = FLAG_SPECS;

export function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = { values: {}, given: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const match = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!match) throw new FlagError(`unexpected argument ${JSON.stringify(arg)}: platform-server takes flags only`);
    const name = (match[1] === 'h' ? 'help' : match[1]) as FlagName;
    const spec = specs[name];
    if (!spec) throw new FlagError(`flag provided but not defined: -${match[1]}`);
    let value: string | boolean;
    if (spec.type === 'boolean') {
      if (match[2] === undefined) value = true;
      else if (/^(true|1|t)$/i.test(match[2])) value = true;
      else if (/^(false|0|f)$/i.test(match[2])) value = false;
      else throw new FlagError(`invalid boolean value ${JSON.stringify(match[2])} for -${name}: use true or false`);
    } else if (match[2] !== undefined) {
      value = match[2];
    } else {
      if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: -${name} <${spec.value}>`);
      value = argv[++i];
    }
    flags.values[name] = value;
    flags.given.push(name);
  }
  return flags;
}

export function flag(flags: Flags, name: FlagName): boolean {
  const value = flags.values[name];
  return typeof value === 'boolean' ? value : Boolean((specs[name] as FlagSpec).default);
}

export function stringFlag(flags: Flags, name: FlagName): string | undefined {
  const value = flags.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Flags the user set that this version accepts but does not act on yet, each to be logged once. */
export function pendingFlags(flags: Flags): FlagName[] {
  return flags.given.filter((name) => (specs[name] as FlagSpec).pending);
}

export function usage(): string {
  const lines = Object.entries(specs).map(([name, spec]) => {
    const left = `  -${name}${spec.type === 'string' ? ` <${spec.value}>` : ''}`;
    const suffix = spec.default ? ' (default true)' : '';
    return `${left.padEnd(42)}${spec.help}${suffix}${spec.pending ? ' [not supported yet]' : ''}`;
  });
  return ['Usage: platform-server -config <file> [flags]', '', 'Flags:', ...lines, ''].join('\n');
}
