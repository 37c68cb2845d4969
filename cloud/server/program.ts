// The platform-cloud command line: `serve` and the admin commands (org, location, machine, key), plus
// whatever subcommands extensions add.
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { createSecureContext } from 'node:tls';
import { join } from 'node:path';
import { coreAdminActions } from '../admin/actions.js';
import { runAdminAction, type AdminTarget } from '../admin/runner.js';
import { defaultWebPort } from '../web/cloud-web.js';
import { startCloud } from './cloud-server.js';
import { addWorkerCommand } from './worker-command.js';
import { backendOptions, environmentHelp, resolveBackend, type BackendChoice, type BackendFlags } from './backend-options.js';
import type { BlobStore } from '../store/blob-store.js';
import { startTracing, type Tracing } from '../../core/serving/telemetry/tracing.js';
import { observeTracing } from '../../core/serving/telemetry/trace-metrics.js';
import { registerExtensions, type AdminRunner, type CloudExtension, type ServingTls } from '../kit/extension-contract.js';

export const defaultDataDir = () => process.env.PLATFORM_CLOUD_DATA_DIR ?? join(homedir(), '.platform', 'cloud');

type Printer = (result: Record<string, unknown>) => string;

/**
 * Reads `--tls-cert` and `--tls-key`: both or neither. The pair is checked here (PEM, key matches the
 * certificate) so that a bad file is an error naming the flag before anything starts, not a failed bind.
 */
export function readServingTls(certFile: string | undefined, keyFile: string | undefined): ServingTls | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined) throw new Error('--tls-key needs --tls-cert: give both or neither');
  if (keyFile === undefined) throw new Error('--tls-cert needs --tls-key: give both or neither');
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${flag} ${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
  };
  const tls = { cert: read('--tls-cert', certFile), key: read('--tls-key', keyFile) };
  try {
    createSecureContext({ cert: tls.cert });
  } catch (err) {
    throw new Error(`--tls-cert ${certFile}: not a PEM certificate (${(err as Error).message})`, { cause: err });
  }
  try {
    createSecureContext({ key: tls.key });
  } catch (err) {
    throw new Error(`--tls-key ${keyFile}: not a PEM private key (${(err as Error).message})`, { cause: err });
  }
  try {
    createSecureContext(tls);
  } catch (err) {
    throw new Error(`--tls-key ${keyFile} does not belong to the certificate of --tls-cert ${certFile} (${(err as Error).message})`, { cause: err });
  }
  return tls;
}

export function buildProgram(extensions: CloudExtension[]): Command {
  const program = new Command('platform-cloud')
    .description('The platform cloud: organizations and API keys, data sync, data queries and datasets')
    // A hint, not the whole usage: most errors are about a value or the services (a bucket, a database),
    // and a unit that restarts would fill its journal with the usage text.
    .showHelpAfterError('(add --help for the usage)');
  const actions = registerExtensions(extensions, coreAdminActions);

  program
    .command('serve')
    .description('start the cloud service; prints "platform-cloud serving <host:port>" when ready')
    .addOption(
      new Option('--data-dir <dir>', "data directory (DuckDB file, blobs, token secret; scale-out mode: this node's own files)").default(defaultDataDir()),
    )
    .addOption(backendOptions()[0])
    .addOption(backendOptions()[1])
    .addOption(backendOptions()[2])
    .option('--port <n>', 'gRPC port; 0 picks a free one', '8081')
    .option('--host <host>', 'address to bind; 0.0.0.0 to accept remote machines', '127.0.0.1')
    .option('--token-ttl <seconds>', 'lifetime of access tokens', '3600')
    .option('--tls-cert <file>', 'PEM certificate chain: serve gRPC and the PostgreSQL endpoint over TLS (needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--web-port <n>', 'HTTP port of the data browser (gRPC-Web, thumbnails); default the gRPC port + 1, or a free one when --port is 0')
    .option(
      '--web-allowed-hosts <names>',
      'comma-separated names the data browser answers to besides --host, localhost and IP addresses (DNS rebinding guard; also PLATFORM_WEB_ALLOWED_HOSTS)',
    )
    .option(
      '--otlp-endpoint <url>',
      'send a span of every API call to this OTLP/HTTP receiver (http://host:4318; default $OTEL_EXPORTER_OTLP_ENDPOINT; unset: no tracing, no OpenTelemetry loaded)',
    )
    .option(
      '--trace-sample-ratio <r>',
      'with --otlp-endpoint: the share of traces recorded, 0 to 1 (default 1: every call); a call carrying traceparent follows its caller',
      '1',
    )
    .addHelpText('after', environmentHelp)
    .action(
      async (opts: {
        dataDir: string;
        backendStoreUri?: string;
        artifactsDestination?: string;
        s3Endpoint?: string;
        port: string;
        host: string;
        tokenTtl: string;
        tlsCert?: string;
        tlsKey?: string;
        webPort?: string;
        webAllowedHosts?: string;
        otlpEndpoint?: string;
        traceSampleRatio: string;
      }) => {
        const port = Number(opts.port);
        const webPort = opts.webPort === undefined ? defaultWebPort(port) : Number(opts.webPort);
        if (!Number.isInteger(webPort) || webPort < 0 || webPort > 65535) program.error(`--web-port must be an integer from 0 to 65535, got "${opts.webPort}"`);
        const ttl = Number(opts.tokenTtl);
        if (!Number.isInteger(port) || port < 0 || port > 65535) program.error(`--port must be an integer from 0 to 65535, got "${opts.port}"`);
        if (!Number.isInteger(ttl) || ttl < 1) program.error(`--token-ttl must be a positive integer of seconds, got "${opts.tokenTtl}"`);
        let tls: ServingTls | undefined;
        let backend: BackendChoice = { mode: 'embedded' };
        try {
          tls = readServingTls(opts.tlsCert, opts.tlsKey);
          backend = resolveBackend(opts);
        } catch (err) {
          program.error((err as Error).message);
        }
        const sampleRatio = Number(opts.traceSampleRatio);
        if (opts.traceSampleRatio.trim() === '' || !(sampleRatio >= 0 && sampleRatio <= 1)) {
          program.error(`--trace-sample-ratio must be a number from 0 to 1, got "${opts.traceSampleRatio}"`);
        }
        const otlpEndpoint = opts.otlpEndpoint ?? (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined);
        let tracing: Tracing | undefined;
        if (otlpEndpoint !== undefined) {
          try {
            tracing = await startTracing({ serviceName: 'platform-cloud', otlpEndpoint, sampleRatio });
          } catch (err) {
            program.error(`--otlp-endpoint: ${(err as Error).message}`);
          }
          if (tracing) observeTracing(tracing);
        }
        // The bucket is checked first (it exists, the credentials are accepted): S3BlobStore.open says which.
        let blobs: BlobStore | undefined;
        if (backend.mode === 'scale-out') {
          try {
            // Loaded only here: the AWS SDK costs the embedded default nothing.
            const { S3BlobStore } = await import('../store/s3-blob-store.js');
            blobs = await S3BlobStore.open(backend.artifactsDestination, { endpoint: backend.s3Endpoint });
          } catch (err) {
            program.error(`--artifacts-destination: ${(err as Error).message}`);
          }
        }
        // A failure to start (a busy port, a database that refuses the schema) is one line naming the
        // cause, not an uncaught exception's stack: systemd's journal shows it on every restart.
        const cloud = await startCloud({
          backendStoreUri: backend.mode === 'scale-out' ? backend.backendStoreUri : undefined,
          blobs,
          dataDir: opts.dataDir,
          port,
          host: opts.host,
          tokenTtlSeconds: ttl,
          extensions,
          tls,
          web: { port: webPort, allowedHosts: (opts.webAllowedHosts ?? '').split(',').filter((n) => n.trim() !== '') },
        }).catch((err: unknown) => program.error(`serve could not start: ${(err as Error).message}`));
        // Before the serving line, so whoever waits for that line finds the page's address already printed.
        process.stdout.write(`platform-cloud web page on ${cloud.webUrl}\n`);
        process.stdout.write(`platform-cloud serving ${cloud.address}\n`);
        let stopping = false;
        const stop = () => {
          if (stopping) return;
          stopping = true;
          cloud
            .stop()
            .then(() => tracing?.shutdown())
            .then(
              () => process.exit(0),
              () => process.exit(1),
            );
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      },
    );

  addWorkerCommand(program, defaultDataDir());

  // Where an admin action runs: the scale-out mode's PostgreSQL when the stores' flags or variables name
  // it (directly, from any host, server or not: cloud/admin/runner.ts), else the data dir's cloud.
  const adminTarget = (dataDir: string | undefined, flags: BackendFlags = {}): AdminTarget => {
    const backend = resolveBackend(flags);
    return backend.mode === 'scale-out' ? { backendStoreUri: backend.backendStoreUri } : (dataDir ?? defaultDataDir());
  };
  const runner: AdminRunner = {
    defaultDataDir: defaultDataDir(),
    run: async (name, args, dataDir) => runAdminAction(adminTarget(dataDir), name, args, actions),
  };
  const adminFor = (cmd: Command) => ({
    run: async (name: string, args: Record<string, unknown>) => {
      const opts = cmd.opts() as BackendFlags & { dataDir?: string };
      return runAdminAction(adminTarget(opts.dataDir, opts), name, args, actions);
    },
  });
  const adminCommand = (parent: Command, name: string, description: string) =>
    parent
      .command(name)
      .description(description)
      .addOption(new Option('--data-dir <dir>', 'data directory of the cloud').default(defaultDataDir()))
      .addOption(backendOptions()[0])
      .addOption(backendOptions()[1])
      .addOption(backendOptions()[2])
      .option('--json', 'print the result as JSON');
  const runAndPrint = async (cmd: Command, action: string, args: Record<string, unknown>, print: Printer) => {
    try {
      const result = (await adminFor(cmd).run(action, args)) as Record<string, unknown>;
      process.stdout.write(`${(cmd.opts() as { json?: boolean }).json ? JSON.stringify(result) : print(result)}\n`);
    } catch (err) {
      program.error(`${action} failed: ${(err as Error).message}`);
    }
  };
  const lines: Printer = (r) =>
    Object.entries(r)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join('\n');

  const org = program.command('org').description('organizations');
  const orgCreate = adminCommand(org, 'create', 'create an organization; prints its id')
    .argument('<name>', 'organization name')
    .action(async (name: string) => runAndPrint(orgCreate, 'org.create', { name }, (r) => String(r.id)));
  const orgList = adminCommand(org, 'list', 'list organizations').action(async () => {
    try {
      const result = await adminFor(orgList).run('org.list', {});
      const rows = result as { id: string; name: string }[];
      process.stdout.write(`${(orgList.opts() as { json?: boolean }).json ? JSON.stringify(rows) : rows.map((r) => `${r.id}\t${r.name}`).join('\n')}\n`);
    } catch (err) {
      program.error(`org.list failed: ${(err as Error).message}`);
    }
  });

  const location = program.command('location').description('locations of an organization');
  const locationCreate = adminCommand(location, 'create', 'create a location; prints its id')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--name <name>', 'location name')
    .action(async (opts: { org: string; name: string }) =>
      runAndPrint(locationCreate, 'location.create', { org: opts.org, name: opts.name }, (r) => String(r.id)),
    );

  const machine = program.command('machine').description('machines (robots) and their parts');
  const machineCreate = adminCommand(machine, 'create', 'create a machine with its main part; prints machine_id, part_id, part_secret')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--name <name>', 'machine name')
    .option('--location <id>', "location id (default: the organization's first location)")
    .action(async (opts: { org: string; name: string; location?: string }) =>
      runAndPrint(machineCreate, 'machine.create', { org: opts.org, name: opts.name, location: opts.location }, lines),
    );

  const key = program.command('key').description('API keys');
  const keyCreate = adminCommand(key, 'create', 'create an API key; prints id and key (the key is shown only once)')
    .requiredOption('--org <id>', 'organization id')
    .option('--location <id>', 'scope the key to one location')
    .option('--machine <id>', 'scope the key to one machine')
    .addOption(new Option('--role <role>', 'role of the key').choices(['owner', 'operator']).makeOptionMandatory())
    .action(async (opts: { org: string; location?: string; machine?: string; role: string }) =>
      runAndPrint(keyCreate, 'key.create', { org: opts.org, location: opts.location, machine: opts.machine, role: opts.role }, lines),
    );

  const keyList = adminCommand(key, 'list', "list an organization's API keys (never their secrets)")
    .requiredOption('--org <id>', 'organization id')
    .action(async (opts: { org: string }) => {
      try {
        const rows = (await adminFor(keyList).run('key.list', { org: opts.org })) as Record<string, unknown>[];
        const text = rows.map((r) => [r.id, r.scope, r.role, r.status, r.time_created].join('\t')).join('\n');
        process.stdout.write(`${(keyList.opts() as { json?: boolean }).json ? JSON.stringify(rows) : text}\n`);
      } catch (err) {
        program.error(`key.list failed: ${(err as Error).message}`);
      }
    });
  const keyRevoke = adminCommand(key, 'revoke', 'revoke an API key; its access tokens are refused within a second')
    .argument('<id>', 'API key id')
    .action(async (id: string) => runAndPrint(keyRevoke, 'key.revoke', { id }, (r) => `revoked ${String(r.id)}`));
  const keyRotate = adminCommand(key, 'rotate', 'give an API key a new secret; prints it once; tokens of the old secret are refused')
    .argument('<id>', 'API key id')
    .action(async (id: string) => runAndPrint(keyRotate, 'key.rotate', { id }, lines));

  for (const ext of extensions) ext.commands?.(program, runner);
  return program;
}
