// Release channels of the agent and the runtime: which binaries exist (one row per subsystem, version
// and platform, with URL and sha256) and which version each channel (stable, dev) points at. Filled by
// `platform-cloud agent release add` / `agent channel set`; read by the agent service.
import semver from 'semver';
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import { parseVersionSpec } from '../../core/config/version-spec.js';
import type { TabularStore } from '../store/tabular.js';
import { ReleaseResolutionError } from '../errors/catalogue.js';
export { ReleaseResolutionError };

export const AGENT_SUBSYSTEMS = ['agent', 'platform-server'] as const;
export type AgentSubsystem = (typeof AGENT_SUBSYSTEMS)[number];
export const CHANNELS = ['stable', 'dev'] as const;
/** A release for platform "any" (e.g. a script) serves every host. */
export const ANY_PLATFORM = 'any';

export const releaseTables = [
  `CREATE TABLE IF NOT EXISTS agent_releases (
     subsystem VARCHAR NOT NULL, version VARCHAR NOT NULL, platform VARCHAR NOT NULL,
     url VARCHAR NOT NULL, sha256 VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS agent_release_channels (
     subsystem VARCHAR NOT NULL, channel VARCHAR NOT NULL, version VARCHAR NOT NULL, time_updated TIMESTAMPTZ NOT NULL)`,
];

/** On DuckDB the module makes its tables; on PostgreSQL the schema's migrations did (cloud/store/pg-schema.ts). */
export async function ensureReleaseTables(store: TabularStore): Promise<void> {
  if (store.dialect !== 'duckdb') return;
  for (const sql of releaseTables) await store.execute(sql);
}

export interface ReleaseRow {
  subsystem: string;
  version: string;
  platform: string;
  url: string;
  sha256: string;
  time_created?: Date;
}

const now = () => new Date();

export function requireSubsystem(value: unknown): AgentSubsystem {
  if (!AGENT_SUBSYSTEMS.includes(value as AgentSubsystem))
    throw invalidArgument(`subsystem must be "agent" or "platform-server", got ${JSON.stringify(value)}`);
  return value as AgentSubsystem;
}

function requireVersion(value: unknown): string {
  const v = typeof value === 'string' ? semver.valid(value) : null;
  if (!v) throw invalidArgument(`version must be a semantic version such as 1.2.3, got ${JSON.stringify(value)}`);
  return v;
}

function requirePlatform(value: unknown): string {
  if (value === ANY_PLATFORM) return ANY_PLATFORM;
  if (typeof value !== 'string' || !/^[a-z0-9]+\/[a-z0-9]+$/.test(value)) {
    throw invalidArgument(`platform must look like linux/amd64, linux/arm64, windows/amd64, or be "any"; got ${JSON.stringify(value)}`);
  }
  return value;
}

function requireUrl(value: unknown): string {
  if (typeof value !== 'string') throw invalidArgument('url is required');
  const spec = (() => {
    try {
      return parseVersionSpec(value);
    } catch {
      return undefined;
    }
  })();
  if (!spec || (spec.kind !== 'url' && spec.kind !== 'file')) throw invalidArgument(`url must be an http(s):// or file:// URL, got ${JSON.stringify(value)}`);
  return value;
}

function requireSha(value: unknown): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{64}$/i.test(value)) throw invalidArgument('sha256 must be 64 hex digits');
  return value.toLowerCase();
}

/** Adds (or replaces) the binary of one subsystem version for one platform; optionally points a channel at it. */
export async function addRelease(store: TabularStore, args: Record<string, unknown>): Promise<ReleaseRow & { channel?: string }> {
  await ensureReleaseTables(store);
  const row: ReleaseRow = {
    subsystem: requireSubsystem(args.subsystem),
    version: requireVersion(args.version),
    platform: requirePlatform(args.platform ?? ANY_PLATFORM),
    url: requireUrl(args.url),
    sha256: requireSha(args.sha256),
  };
  const channel = args.channel === undefined || args.channel === '' ? undefined : requireChannel(args.channel);
  await store.transact(async (tx) => {
    await tx.execute('DELETE FROM agent_releases WHERE subsystem = ? AND version = ? AND platform = ?', [row.subsystem, row.version, row.platform]);
    await tx.execute('INSERT INTO agent_releases VALUES (?, ?, ?, ?, ?, ?)', [row.subsystem, row.version, row.platform, row.url, row.sha256, now()]);
    if (channel) {
      await tx.execute('DELETE FROM agent_release_channels WHERE subsystem = ? AND channel = ?', [row.subsystem, channel]);
      await tx.execute('INSERT INTO agent_release_channels VALUES (?, ?, ?, ?)', [row.subsystem, channel, row.version, now()]);
    }
  });
  return { ...row, ...(channel ? { channel } : {}) };
}

function requireChannel(value: unknown): string {
  if (!CHANNELS.includes(value as 'stable')) throw invalidArgument(`channel must be "stable" or "dev", got ${JSON.stringify(value)}`);
  return value as string;
}

/** Points a channel at a version that has at least one release. */
export async function setChannel(store: TabularStore, args: Record<string, unknown>): Promise<{ subsystem: string; channel: string; version: string }> {
  await ensureReleaseTables(store);
  const subsystem = requireSubsystem(args.subsystem);
  const channel = requireChannel(args.channel);
  const version = requireVersion(args.version);
  const rows = await store.query('SELECT 1 FROM agent_releases WHERE subsystem = ? AND version = ? LIMIT 1', [subsystem, version]);
  if (rows.length === 0) throw notFound(`${subsystem} ${version} has no release; add one with "platform-cloud agent release add" first`);
  await store.transact(async (tx) => {
    await tx.execute('DELETE FROM agent_release_channels WHERE subsystem = ? AND channel = ?', [subsystem, channel]);
    await tx.execute('INSERT INTO agent_release_channels VALUES (?, ?, ?, ?)', [subsystem, channel, version, now()]);
  });
  return { subsystem, channel, version };
}

export async function listReleases(
  store: TabularStore,
  args: Record<string, unknown>,
): Promise<{ releases: ReleaseRow[]; channels: { subsystem: string; channel: string; version: string }[] }> {
  await ensureReleaseTables(store);
  const filter = args.subsystem ? requireSubsystem(args.subsystem) : undefined;
  const releases = (await store.query(
    `SELECT subsystem, version, platform, url, sha256, time_created FROM agent_releases ${filter ? 'WHERE subsystem = ?' : ''} ORDER BY subsystem, time_created`,
    filter ? [filter] : [],
  )) as unknown as ReleaseRow[];
  const channels = (await store.query(
    `SELECT subsystem, channel, version FROM agent_release_channels ${filter ? 'WHERE subsystem = ?' : ''} ORDER BY subsystem, channel`,
    filter ? [filter] : [],
  )) as unknown as { subsystem: string; channel: string; version: string }[];
  return { releases: releases.map((r) => ({ ...r, time_created: r.time_created })), channels };
}

/**
 * The release a version spec names for a platform: a channel's version (or, with no channel set, the
 * newest stable version / newest of any kind for dev), an exact version, or the newest in a range.
 * URL specs are their own release, without a sha256.
 */
export async function resolveRelease(store: TabularStore, subsystem: AgentSubsystem, spec: string, platform: string): Promise<ReleaseRow> {
  const parsed = parseVersionSpec(spec);
  if (parsed.kind === 'url' || parsed.kind === 'file') return { subsystem, version: spec, platform, url: spec, sha256: '' };
  const rows = (await store.query('SELECT subsystem, version, platform, url, sha256 FROM agent_releases WHERE subsystem = ? AND platform IN (?, ?)', [
    subsystem,
    platform,
    ANY_PLATFORM,
  ])) as unknown as ReleaseRow[];
  // An exact-platform build wins over an "any" one of the same version.
  const byVersion = new Map<string, ReleaseRow>();
  for (const r of rows) if (!byVersion.has(r.version) || r.platform !== ANY_PLATFORM) byVersion.set(r.version, r);
  const versions = [...byVersion.keys()];
  let version: string | null;
  if (parsed.kind === 'channel') {
    const ch = await store.query('SELECT version FROM agent_release_channels WHERE subsystem = ? AND channel = ?', [subsystem, parsed.channel]);
    if (ch.length) version = String(ch[0].version);
    else version = semver.maxSatisfying(versions, '*', { includePrerelease: parsed.channel === 'dev' });
    if (!version) throw new ReleaseResolutionError(`no ${parsed.channel} release of ${subsystem} for ${platform}`);
  } else if (parsed.kind === 'semver') {
    version = parsed.version;
  } else {
    version = semver.maxSatisfying(versions, parsed.range);
    if (!version) throw new ReleaseResolutionError(`no release of ${subsystem} for ${platform} satisfies ${parsed.range}`);
  }
  const row = byVersion.get(version);
  if (!row) throw new ReleaseResolutionError(`${subsystem} ${version} has no release for ${platform}`);
  return row;
}
