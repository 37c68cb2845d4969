// Typed errors of the agent; each names the subsystem (agent or platform-server) it concerns.
export type Subsystem = 'agent' | 'platform-server';

export class ChecksumMismatchError extends Error {
  constructor(
    readonly subsystem: Subsystem,
    readonly source: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${subsystem}: download from ${source} has sha256 ${actual}, expected ${expected}; refused`);
    this.name = 'ChecksumMismatchError';
  }
}

export class DownloadError extends Error {
  constructor(
    readonly subsystem: Subsystem,
    readonly source: string,
    reason: string,
  ) {
    super(`${subsystem}: cannot download ${source}: ${reason}`);
    this.name = 'DownloadError';
  }
}

export class VersionResolutionError extends Error {
  constructor(
    readonly subsystem: Subsystem,
    readonly version: string,
    reason: string,
  ) {
    super(`${subsystem}: cannot resolve version ${JSON.stringify(version)}: ${reason}`);
    this.name = 'VersionResolutionError';
  }
}

export class CredentialsError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'CredentialsError';
  }
}
