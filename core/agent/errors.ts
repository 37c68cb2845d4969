// Typed errors of the agent; each names the subsystem (agent or platform-server) it concerns. They are
// entries of the machine's error catalogue (core/serving/errors.ts), re-exported here where the agent's
// modules import them.
export { ChecksumMismatchError, CredentialsError, DownloadError, VersionResolutionError, type Subsystem } from '../serving/errors.js';
