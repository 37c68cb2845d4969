// The agent extension of platform-cloud: the AgentDeviceService, its tables (on ctx.tables: DuckDB in the
// embedded default, PostgreSQL in the scale-out mode), and the admin commands
//   platform-cloud agent release add|list, agent channel set, agent config set|get
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Option, type Command } from 'commander';
import { parseVersionSpec } from '../../core/config/version-spec.js';
import type { AdminRunner, CloudExtension } from '../kit/extension-contract.js';
import { addAgentService } from './agent-service.js';
import { ensureMachineConfigTables, getMachineAgentConfig, setMachineAgentConfig } from './machine-agent-config.js';
import { addRelease, ensureReleaseTables, listReleases, setChannel, AGENT_SUBSYSTEMS, CHANNELS } from './releases.js';

/** How long a download for the sha256 may take before the file counts as unreachable. */
const DOWNLOAD_TIMEOUT_MS = 120_000;

/** sha256 of a local file or of what a URL serves, so that admins need not compute it by hand. */
export async function sha256Of(location: string): Promise<string> {
  const hash = createHash('sha256');
  const spec = parseVersionSpec(location);
  if (spec.kind === 'file') {
    for await (const chunk of createReadStream(spec.path)) hash.update(chunk as Buffer);
  } else if (spec.kind === 'url') {
    const res = await fetch(spec.url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    if (!res.ok || !res.body) throw new Error(`GET ${spec.url}: HTTP ${res.status}`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
  } else {
    throw new Error(`${location} is not a URL`);
  }
  return hash.digest('hex');
}

function commands(program: Command, admin: AdminRunner): void {
  const agent = program.command('agent').description('platform-agent release channels and machine agent configs');
  const sub = (parent: Command, name: string, description: string) =>
    parent
      .command(name)
      .description(description)
      .addOption(new Option('--data-dir <dir>', 'data directory of the cloud').default(admin.defaultDataDir))
      .option('--json', 'print the result as JSON');
  const run = async (cmd: Command, action: string, args: Record<string, unknown>, print: (r: unknown) => string) => {
    try {
      const result = await admin.run(action, args, (cmd.opts() as { dataDir?: string }).dataDir);
      process.stdout.write(`${(cmd.opts() as { json?: boolean }).json ? JSON.stringify(result) : print(result)}\n`);
    } catch (err) {
      program.error(`${action} failed: ${(err as Error).message}`);
    }
  };

  const release = agent.command('release').description('published binaries of the agent and platform-server');
  const add = sub(release, 'add', 'publish a binary of one version for one platform (sha256 computed from --file or the URL when not given)')
    .addOption(new Option('--subsystem <name>', 'agent or platform-server').choices([...AGENT_SUBSYSTEMS]).makeOptionMandatory())
    .requiredOption('--version <semver>', 'version of this binary, e.g. 0.2.1')
    .option('--platform <os/arch>', 'linux/amd64, linux/arm64, windows/amd64, or any', 'any')
    .option('--url <url>', 'http(s):// or file:// URL the machines download it from')
    .option('--file <path>', 'a local binary: its sha256 is computed, and it is served as a file:// URL unless --url is given')
    .option('--sha256 <hex>', 'sha256 of the binary; checked against the file when it can be read from here (refused when it differs)')
    .addOption(new Option('--channel <channel>', 'also point this channel at the version').choices([...CHANNELS]))
    .action(async (o: { subsystem: string; version: string; platform: string; url?: string; file?: string; sha256?: string; channel?: string }) => {
      const url = o.url ?? (o.file ? pathToFileURL(resolve(o.file)).href : undefined);
      if (!url) return program.error('give --url or --file');
      const source = o.file ? pathToFileURL(resolve(o.file)).href : url;
      let sha256 = o.sha256;
      if (sha256 === undefined) {
        try {
          sha256 = await sha256Of(source);
        } catch (err) {
          return program.error(`cannot compute the sha256: ${(err as Error).message}`);
        }
      } else if (/^[0-9a-f]{64}$/i.test(sha256)) {
        // A digest that does not match the file would be refused by every machine later: check it now,
        // when the file can be read from here. (A malformed one is refused by the release table's rule.)
        let actual: string | undefined;
        try {
          actual = await sha256Of(source);
        } catch (err) {
          process.stderr.write(
            `warning: --sha256 not checked: ${source} cannot be read from here (${(err as Error).message}); the release is added with the sha256 as given, and each machine checks the bytes it downloads against it\n`,
          );
        }
        if (actual !== undefined && actual !== sha256.toLowerCase())
          return program.error(
            `--sha256 ${sha256.toLowerCase()} does not match ${source}, whose sha256 is ${actual}: machines would refuse the download; give the file's own sha256, or leave --sha256 out to have it computed`,
          );
      }
      await run(add, 'agent.release.add', { subsystem: o.subsystem, version: o.version, platform: o.platform, url, sha256, channel: o.channel }, (r) => {
        const row = r as { subsystem: string; version: string; platform: string; sha256: string };
        return `${row.subsystem} ${row.version} ${row.platform} ${row.sha256}`;
      });
    });
  const list = sub(release, 'list', 'list releases and channels')
    .option('--subsystem <name>', 'only this subsystem')
    .action(async (o: { subsystem?: string }) =>
      run(list, 'agent.release.list', { subsystem: o.subsystem }, (r) => {
        const { releases, channels } = r as Awaited<ReturnType<typeof listReleases>>;
        return [
          ...releases.map((x) => `${x.subsystem}\t${x.version}\t${x.platform}\t${x.url}\t${x.sha256}`),
          ...channels.map((c) => `channel ${c.subsystem} ${c.channel} -> ${c.version}`),
        ].join('\n');
      }),
    );

  const channel = agent.command('channel').description('release channels (stable, dev)');
  const set = sub(channel, 'set', 'point a channel at a released version')
    .addOption(new Option('--subsystem <name>', 'agent or platform-server').choices([...AGENT_SUBSYSTEMS]).makeOptionMandatory())
    .addOption(new Option('--channel <channel>', 'stable or dev').choices([...CHANNELS]).makeOptionMandatory())
    .requiredOption('--version <semver>', 'a version that has a release')
    .action(async (o: { subsystem: string; channel: string; version: string }) =>
      run(set, 'agent.channel.set', o, (r) => {
        const c = r as { subsystem: string; channel: string; version: string };
        return `${c.subsystem} ${c.channel} -> ${c.version}`;
      }),
    );

  const config = agent.command('config').description("a machine's saved agent config and maintenance window");
  const configSet = sub(config, 'set', 'save the agent config of a machine from a JSON file (a machine config with "agent", or the agent object)')
    .requiredOption('--machine <id>', 'machine id')
    .requiredOption('--file <path>', 'JSON file')
    .action(async (o: { machine: string; file: string }) => {
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(o.file, 'utf8'));
      } catch (err) {
        return program.error(`${o.file}: ${(err as Error).message}`);
      }
      await run(configSet, 'agent.config.set', { machine: o.machine, config: doc }, (r) => String((r as { machine_id: string }).machine_id));
    });
  const configGet = sub(config, 'get', 'print the saved agent config of a machine')
    .requiredOption('--machine <id>', 'machine id')
    .action(async (o: { machine: string }) => run(configGet, 'agent.config.get', { machine: o.machine }, (r) => JSON.stringify(r, null, 2)));
}

export const agentExtension: CloudExtension = {
  name: 'agent',
  async start(ctx) {
    await ensureReleaseTables(ctx.tables);
    await ensureMachineConfigTables(ctx.tables);
    addAgentService(ctx.server, ctx.tables, ctx.authorizer);
  },
  commands,
  adminActions: {
    'agent.release.add': (store, args) => addRelease(store, args),
    'agent.release.list': (store, args) => listReleases(store, args),
    'agent.channel.set': (store, args) => setChannel(store, args),
    'agent.config.set': (store, args) => setMachineAgentConfig(store, args),
    'agent.config.get': (store, args) => getMachineAgentConfig(store, String(args.machine ?? '')),
  },
};
