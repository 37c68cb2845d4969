// `platform-cloud worker`, the real program: it needs both stores' flags (no embedded mode), names what
// is wrong, runs on one PostgreSQL and one S3 (taking jobs from their queue; cloud/mltraining/worker.test.ts
// runs jobs through it), and SIGTERM ends it cleanly. Other commands do not load the AWS SDK.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnServing } from '../../core/serving/testing/spawn-serving.js';
import { startScaleOutBackends } from '../testing/scale-out.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';

const main = fileURLToPath(new URL('main.ts', import.meta.url));
const run = promisify(execFile);

/** Runs platform-cloud with args; resolves with its exit code and output. */
async function platformCloud(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', main, ...args], { env: { ...process.env, ...env } });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

test('worker without the stores, or with half of them, exits 1 saying what it needs', async (t) => {
  const none = await platformCloud(['worker'], { PLATFORM_BACKEND_STORE_URI: '', PLATFORM_ARTIFACTS_DESTINATION: '' });
  t.is(none.code, 1);
  t.regex(
    none.output,
    /^worker runs in the scale-out mode only: give --backend-store-uri postgres:\/\/\.\.\. and --artifacts-destination s3:\/\/bucket\/prefix/,
  );
  const half = await platformCloud(['worker', '--backend-store-uri', 'postgres://db.internal/platform'], { PLATFORM_ARTIFACTS_DESTINATION: '' });
  t.is(half.code, 1);
  t.regex(half.output, /^--backend-store-uri needs --artifacts-destination/);
  const bad = await platformCloud(['worker', '--backend-store-uri', 'mysql://db/x', '--artifacts-destination', 's3://bucket/x']);
  t.regex(bad.output, /^--backend-store-uri 'mysql:\/\/db\/x' must be a PostgreSQL connection URI/);
  // A bad training setting stops it before it reaches the stores, naming the variable and the rule.
  const takes = await platformCloud(['worker', '--backend-store-uri', 'postgres://db.invalid/x', '--artifacts-destination', 's3://bucket/x'], {
    PLATFORM_TRAINING_JOB_MAX_TAKES: '0',
  });
  t.is(takes.code, 1);
  t.regex(takes.output, /PLATFORM_TRAINING_JOB_MAX_TAKES must be a whole number of at least 1, got "0"/);
});

test('worker runs on PostgreSQL and S3, and SIGTERM ends it with exit 0', async (t) => {
  const backends = await startScaleOutBackends();
  const dir = tempDataDir();
  try {
    const worker = await spawnServing(main, ['worker', '--data-dir', dir, ...backends.args], {
      name: 'platform-cloud worker',
      env: { ...process.env, ...backends.env },
      nodeFlags: ['--import', 'tsx'],
      servingLine: /platform-cloud worker running (.+)/,
      timeoutMs: 120_000,
    });
    t.regex(worker.address, /^worker \S+:\d+$/, 'the worker names itself as in job logs');
    const tables = await backends.openTables();
    const queues = await tables.query("SELECT count(*) AS n FROM information_schema.schemata WHERE schema_name = 'pgboss'");
    t.is(Number(queues[0].n), 1, 'the queue lives in the cloud database');
    t.is(await worker.stop(), 0);
  } finally {
    removeDataDir(dir);
    await backends.stop();
  }
});

test('the command line loads no AWS SDK until a command needs S3 (it takes 0.4 s to load)', async (t) => {
  // The SDK is CommonJS: once loaded, its files are in require's cache.
  const loads = async (file: string) => {
    const script = `import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      await import(${JSON.stringify(fileURLToPath(new URL(file, import.meta.url)))});
      process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('@aws-sdk/client-s3'))));`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    return stdout;
  };
  t.is(await loads('../store/s3-blob-store.ts'), 'true', 'the probe sees the SDK where it is loaded');
  t.is(await loads('program.ts'), 'false', 'platform-cloud with its commands and flags does not load it');
  t.is(await loads('extensions.ts'), 'false', 'nor do its extensions');
  const help = await platformCloud(['serve', '--help']);
  t.is(help.code, 0);
  t.regex(help.output, /--backend-store-uri/, 'the help names the flags');
});
