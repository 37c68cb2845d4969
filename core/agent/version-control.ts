// Turns the version_control settings into installed binaries: URL and file:// versions resolve here,
// named versions (stable, dev, semver, ranges) through the cloud's answer. Downloads go through the
// BinaryCache; installing re-points bin/<subsystem>.
import type { Logger } from './agent-log.js';
import type { UpdateInfo } from '../../gen/platform/app/agent/v1/agent.js';
import type { BinaryCache, BinarySource } from './binary-cache.js';
import { VersionResolutionError, type Subsystem } from './errors.js';
import { parseVersionSpec, type VersionSpec } from '../config/version-spec.js';

export const SUBSYSTEMS: Subsystem[] = ['agent', 'platform-server'];

/** A location from a URL: http(s) stays a URL, file:// becomes a local path. */
function locationOf(url: string): BinarySource['location'] {
  if (/^file:/i.test(url)) {
    const spec = parseVersionSpec(url) as Extract<VersionSpec, { kind: 'file' }>;
    return { kind: 'file', path: spec.path };
  }
  return { kind: 'http', url };
}

/**
 * The binary a version spec names. URL specs need no cloud. Named specs need the cloud's UpdateInfo;
 * without it (offline) they resolve to nothing and the installed binary stays.
 */
export function resolveSource(subsystem: Subsystem, spec: string, cloud: UpdateInfo | undefined): BinarySource | undefined {
  const parsed = parseVersionSpec(spec);
  if (parsed.kind === 'url') return { subsystem, version: spec, location: { kind: 'http', url: parsed.url } };
  if (parsed.kind === 'file') return { subsystem, version: spec, location: { kind: 'file', path: parsed.path } };
  if (!cloud) return undefined;
  if (!cloud.url) throw new VersionResolutionError(subsystem, spec, 'the cloud answered no URL');
  return { subsystem, version: cloud.version || spec, location: locationOf(cloud.url), sha256: cloud.sha256 || undefined };
}

export interface InstallResult {
  subsystem: Subsystem;
  file: string;
  /** True when bin/<subsystem> now points at a different binary than before. */
  changed: boolean;
  version: string;
}

export class VersionControl {
  constructor(
    private readonly cache: BinaryCache,
    private readonly logger: Logger,
  ) {}

  /** Fetches and installs the binary for one subsystem; returns undefined when there is nothing to do. */
  async apply(subsystem: Subsystem, spec: string, cloud: UpdateInfo | undefined): Promise<InstallResult | undefined> {
    const source = resolveSource(subsystem, spec, cloud);
    if (!source) {
      this.logger.debug({ subsystem, spec }, 'named version needs the cloud; keeping the installed binary');
      return undefined;
    }
    const file = await this.cache.fetch(source);
    const changed = await this.cache.install(subsystem, file);
    return { subsystem, file, changed, version: source.version };
  }
}
