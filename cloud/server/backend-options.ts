// Which stores a cloud process runs on (issue 33): the embedded default (one DuckDB file and blob files
// in --data-dir) or the scale-out mode, PostgreSQL for every table and S3 for every blob, shared by
// equal processes. Named after MLflow's flags: --backend-store-uri and --artifacts-destination, also
// read from PLATFORM_BACKEND_STORE_URI and PLATFORM_ARTIFACTS_DESTINATION (a flag wins over its
// variable), and --s3-endpoint for an S3 service other than AWS. S3 credentials are not flags: the AWS
// SDK's standard chain finds them (AWS_ACCESS_KEY_ID..., ~/.aws, instance or container roles).
//
// The two go together or not at all. The pair is what makes processes equal: tables in PostgreSQL with
// blobs on one host's disk would give other processes rows naming content they cannot read, and blobs
// in S3 with tables in one process' DuckDB file would give a single process nothing to share. Either
// half alone is refused before anything starts, with the reason.
import { Option } from 'commander';
import { parseS3Uri, type S3Location } from '../store/s3-location.js';

/** What the command line gave (undefined: not given). */
export interface BackendFlags {
  backendStoreUri?: string;
  artifactsDestination?: string;
  s3Endpoint?: string;
}

export type BackendChoice =
  | { mode: 'embedded' }
  | {
      mode: 'scale-out';
      /** postgres://... as given (with its password, if any: never print it; see redactUri). */
      backendStoreUri: string;
      /** s3://bucket/prefix as given. */
      artifactsDestination: string;
      /** The bucket and key prefix of artifactsDestination. */
      s3: S3Location;
      /** http(s)://host:port of an S3-compatible service; undefined: AWS. */
      s3Endpoint?: string;
    };

export const backendStoreUriEnv = 'PLATFORM_BACKEND_STORE_URI';
export const artifactsDestinationEnv = 'PLATFORM_ARTIFACTS_DESTINATION';

/** A postgres:// URI with its password replaced by ***, for messages and logs. */
export function redactUri(uri: string): string {
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@');
}

/** The value and where it came from: the flag, else its variable (an empty variable counts as unset). */
function pick(flagName: string, flagValue: string | undefined, envName: string, env: NodeJS.ProcessEnv): { value?: string; source: string } {
  if (flagValue !== undefined) return { value: flagValue, source: flagName };
  const fromEnv = env[envName];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: `${envName} (the variable of ${flagName})` };
  return { source: flagName };
}

function checkPostgresUri(source: string, uri: string): void {
  const rule = 'must be a PostgreSQL connection URI, postgres://user[:password]@host[:port]/database (or postgresql://)';
  if (!/^postgres(ql)?:\/\//i.test(uri)) throw new Error(`${source} '${redactUri(uri)}' ${rule}`);
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    throw new Error(`${source} '${redactUri(uri)}' ${rule}: it does not parse as a URI`);
  }
  // An empty host is libpq's Unix socket (postgres:///db?host=/run/postgresql), which needs ?host=.
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) {
    throw new Error(`${source} '${redactUri(uri)}' ${rule}: it names no host (for a Unix socket, add ?host=/run/postgresql)`);
  }
}

function checkEndpoint(endpoint: string): void {
  const rule = 'must be the http:// or https:// URL of an S3-compatible service, e.g. http://127.0.0.1:7480';
  let parsed: URL;
  try {
    parsed = new URL(endpoint);
  } catch {
    throw new Error(`--s3-endpoint '${endpoint}' ${rule}: it does not parse as a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--s3-endpoint '${endpoint}' ${rule}`);
  if (parsed.pathname !== '/' && parsed.pathname !== '')
    throw new Error(`--s3-endpoint '${endpoint}' ${rule}, without a path (the bucket goes in --artifacts-destination)`);
}

/**
 * Reads the stores' flags and variables and checks them before anything starts: throws an Error whose
 * message names the flag (or variable) and the rule it breaks.
 */
export function resolveBackend(flags: BackendFlags, env: NodeJS.ProcessEnv = process.env): BackendChoice {
  const db = pick('--backend-store-uri', flags.backendStoreUri, backendStoreUriEnv, env);
  const blobs = pick('--artifacts-destination', flags.artifactsDestination, artifactsDestinationEnv, env);
  if (db.value === undefined && blobs.value === undefined) {
    if (flags.s3Endpoint !== undefined) {
      throw new Error(
        '--s3-endpoint applies to the S3 of --artifacts-destination: give it only in the scale-out mode (--backend-store-uri and --artifacts-destination)',
      );
    }
    return { mode: 'embedded' };
  }
  if (blobs.value === undefined) {
    throw new Error(
      `${db.source} needs --artifacts-destination s3://bucket/prefix (or ${artifactsDestinationEnv}): the scale-out mode keeps tables in PostgreSQL and blobs in S3, ` +
        'and with blobs on this host other processes would read rows naming content they cannot reach; give both or neither',
    );
  }
  if (db.value === undefined) {
    throw new Error(
      `${blobs.source} needs --backend-store-uri postgres://... (or ${backendStoreUriEnv}): the scale-out mode keeps blobs in S3 and tables in PostgreSQL, ` +
        "and with tables in this process' DuckDB file no other process could share them; give both or neither",
    );
  }
  checkPostgresUri(db.source, db.value);
  let s3: S3Location;
  try {
    s3 = parseS3Uri(blobs.value);
  } catch (err) {
    throw new Error(`${blobs.source}: ${(err as Error).message}`, { cause: err });
  }
  if (flags.s3Endpoint !== undefined) checkEndpoint(flags.s3Endpoint);
  return { mode: 'scale-out', backendStoreUri: db.value, artifactsDestination: blobs.value, s3, s3Endpoint: flags.s3Endpoint };
}

/**
 * The end of `serve --help` and `worker --help`: most settings are environment variables, not flags, and
 * a newcomer reading the help would not know they exist nor where they are described.
 */
export const environmentHelp = `
Settings from the environment (PLATFORM_QUERY_*, PLATFORM_TRAINING_*, PLATFORM_UPLOAD_*, PLATFORM_LOGIN_*,
PLATFORM_BLOB_*, PLATFORM_WEB_*; S3 credentials AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; the
PostgreSQL password PGPASSWORD): cloud/README.md and the manuals it links. Running on PostgreSQL and S3
(flags, systemd units, backups, upgrades, troubleshooting): cloud/store/OPERATIONS.md.`;

/**
 * The three options, for every command that opens the cloud's stores (`serve`, `worker`): add them with
 * cmd.addOption(...) and pass the parsed values to resolveBackend.
 */
export function backendOptions(): Option[] {
  return [
    new Option(
      '--backend-store-uri <uri>',
      `scale-out mode: every table in this PostgreSQL database, postgres://user@host:port/db (also ${backendStoreUriEnv}; needs --artifacts-destination)`,
    ),
    new Option(
      '--artifacts-destination <uri>',
      `scale-out mode: every blob under this S3 location, s3://bucket/prefix; credentials from the AWS SDK's chain (also ${artifactsDestinationEnv}; needs --backend-store-uri)`,
    ),
    new Option('--s3-endpoint <url>', 'with --artifacts-destination: an S3-compatible service other than AWS (Ceph radosgw, MinIO), http://host:port'),
  ];
}

/** PLATFORM_BLOB_SWEEP_INTERVAL_S: how often the scale-out mode's elected process sweeps (default 600 s). */
export function blobSweepIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PLATFORM_BLOB_SWEEP_INTERVAL_S;
  if (raw === undefined || raw === '') return 600_000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`PLATFORM_BLOB_SWEEP_INTERVAL_S must be a number of seconds > 0, got '${raw}'`);
  return value * 1000;
}
