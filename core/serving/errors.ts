// The machine side's error catalogue (in the manner of avvio's lib/errors.js): every error that core/
// throws to its callers, by stable code, with the template of its message. The code (`errorCode`) is
// what callers and tests tell errors apart by; the message says what the error concerns (the field,
// file, host or package) and the rule. The mechanism is error-catalogue.ts; the cloud's catalogue is
// cloud/kit/errors.ts. The modules that throw these re-export them under their old names and places.
//
// Left out on purpose: StatusError (status-error.ts) and the plugin contract's DriverError and
// ConfigError (plugins/), which carry a gRPC status or a config path across threads and processes
// rather than a kind of failure.
import { status, type ServiceError } from '@grpc/grpc-js';
import type { ConfigError } from '../../plugins/validation.js';
import { catalogueCodes, defineError } from './error-catalogue.js';

/** Which program an agent error concerns. */
export type Subsystem = 'agent' | 'platform-server';

// --- config and flags ---

const InvalidConfigBase = defineError(
  'CORE_ERR_CONFIG_INVALID',
  'InvalidConfigError',
  (errors: ConfigError[]) => errors.map((e) => e.message).join('; '),
  (errors) => ({ errors }),
);
/** A config that does not validate: every error, each naming its path and rule. */
export class InvalidConfigError extends InvalidConfigBase {
  /** The errors as the programs print them: a heading, then one indented line each. */
  report(): string {
    return `invalid config:\n${this.errors.map((e) => `  ${e.message}`).join('\n')}`;
  }
}

/** A version_control value that is none of the accepted forms. */
export const VersionSpecError = defineError(
  'CORE_ERR_VERSION_SPEC',
  'VersionSpecError',
  (value: string, rule: string) => `version ${JSON.stringify(value)}: ${rule}`,
  (value, rule) => ({ value, rule }),
);
export type VersionSpecError = InstanceType<typeof VersionSpecError>;

/** A command-line flag that is unknown, malformed or out of range (the message names the flag and the rule). */
export const FlagError = defineError('CORE_ERR_FLAG', 'FlagError', (message: string) => message);
export type FlagError = InstanceType<typeof FlagError>;

// --- the agent ---

export const ChecksumMismatchError = defineError(
  'CORE_ERR_AGENT_CHECKSUM',
  'ChecksumMismatchError',
  (subsystem: Subsystem, source: string, expected: string, actual: string) =>
    `${subsystem}: download from ${source} has sha256 ${actual}, expected ${expected}; refused`,
  (subsystem, source, expected, actual) => ({ subsystem, source, expected, actual }),
);
export type ChecksumMismatchError = InstanceType<typeof ChecksumMismatchError>;

export const DownloadError = defineError(
  'CORE_ERR_AGENT_DOWNLOAD',
  'DownloadError',
  (subsystem: Subsystem, source: string, reason: string) => `${subsystem}: cannot download ${source}: ${reason}`,
  (subsystem, source) => ({ subsystem, source }),
);
export type DownloadError = InstanceType<typeof DownloadError>;

export const VersionResolutionError = defineError(
  'CORE_ERR_AGENT_VERSION_RESOLUTION',
  'VersionResolutionError',
  (subsystem: Subsystem, version: string, reason: string) => `${subsystem}: cannot resolve version ${JSON.stringify(version)}: ${reason}`,
  (subsystem, version) => ({ subsystem, version }),
);
export type VersionResolutionError = InstanceType<typeof VersionResolutionError>;

export const CredentialsError = defineError(
  'CORE_ERR_AGENT_CREDENTIALS',
  'CredentialsError',
  (file: string, reason: string) => `${file}: ${reason}`,
  (file) => ({ file }),
);
export type CredentialsError = InstanceType<typeof CredentialsError>;

/** A network setting (ssid, psk, priority) given to the agent that breaks its rule. */
export const NetworkInputError = defineError(
  'CORE_ERR_NETWORK_INPUT',
  'NetworkInputError',
  (field: string, rule: string) => `${field}: ${rule}`,
  (field, rule) => ({ field, rule }),
);
export type NetworkInputError = InstanceType<typeof NetworkInputError>;

/** A captive-portal form field that breaks its rule (the message names the field). */
export const PortalInputError = defineError('CORE_ERR_PORTAL_INPUT', 'PortalInputError', (message: string) => message);
export type PortalInputError = InstanceType<typeof PortalInputError>;

/** A provisioning call's argument that breaks its rule (INVALID_ARGUMENT to the caller). */
export const ProvisioningArgumentError = defineError('CORE_ERR_PROVISIONING_ARGUMENT', 'ProvisioningArgumentError', (message: string) => message);
export type ProvisioningArgumentError = InstanceType<typeof ProvisioningArgumentError>;

// --- the link to the cloud ---

export const InsecureCredentialsError = defineError(
  'CORE_ERR_INSECURE_CREDENTIALS',
  'InsecureCredentialsError',
  (host: string) =>
    `refusing to send the machine credentials in plaintext to ${host}, which is not a loopback address: use an https:// app_address, or pass -allow-insecure-creds to allow it`,
  (host) => ({ host }),
);
export type InsecureCredentialsError = InstanceType<typeof InsecureCredentialsError>;

/** The cloud refused the part's secret or API key; `code` keeps the refusal's gRPC status for callers that sort by it. */
export const CredentialsRefusedError = defineError(
  'CORE_ERR_CREDENTIALS_REFUSED',
  'CredentialsRefusedError',
  (cause: ServiceError) =>
    `the cloud refused the machine credentials (wrong part secret or API key?): ${cause.details || cause.message} (${status[cause.code]})`,
  (cause) => ({ code: cause.code as number, details: cause.details, cause }),
);
export type CredentialsRefusedError = InstanceType<typeof CredentialsRefusedError>;

// --- packages ---

/** not-found: the cloud has no such package or version; unreachable or refused: it could not be asked, so what is installed is used. */
export const PackageSourceError = defineError(
  'CORE_ERR_PACKAGE_SOURCE',
  'PackageSourceError',
  (_reason: 'not-found' | 'unreachable' | 'refused', message: string) => message,
  (reason) => ({ reason }),
);
export type PackageSourceError = InstanceType<typeof PackageSourceError>;

export const PackageError = defineError(
  'CORE_ERR_PACKAGE',
  'PackageError',
  (_packageName: string, _reason: 'not-found' | 'checksum' | 'disk' | 'offline', message: string) => message,
  (packageName, reason) => ({ packageName, reason }),
);
export type PackageError = InstanceType<typeof PackageError>;

// --- diagnostics ---

export const CpuProfileError = defineError('CORE_ERR_CPU_PROFILE', 'CpuProfileError', (path: string, reason: string) => `-cpuprofile ${path}: ${reason}`);
export type CpuProfileError = InstanceType<typeof CpuProfileError>;

export const ProbeTimeoutError = defineError('CORE_ERR_PROBE_TIMEOUT', 'ProbeTimeoutError', (ms: number) => `timed out after ${ms} ms`);
export type ProbeTimeoutError = InstanceType<typeof ProbeTimeoutError>;

// --- the web ports (shared with the cloud's) ---

/** A gRPC-Web call refused before it is forwarded; `code` is the gRPC status it is answered with. */
export const WebCallError = defineError(
  'CORE_ERR_WEB_CALL',
  'WebCallError',
  (_code: status, message: string) => message,
  (code) => ({ code }),
);
export type WebCallError = InstanceType<typeof WebCallError>;

/** A /debug/pprof-style profile request with a bad parameter (the message names it). */
export const ProfileRequestError = defineError('CORE_ERR_PROFILE_REQUEST', 'ProfileRequestError', (message: string) => message);
export type ProfileRequestError = InstanceType<typeof ProfileRequestError>;

/** Every code of the machine's catalogue (each once; the catalogue's test checks it). */
export const MACHINE_ERROR_CODES = catalogueCodes([
  InvalidConfigError,
  VersionSpecError,
  FlagError,
  ChecksumMismatchError,
  DownloadError,
  VersionResolutionError,
  CredentialsError,
  NetworkInputError,
  PortalInputError,
  ProvisioningArgumentError,
  InsecureCredentialsError,
  CredentialsRefusedError,
  PackageSourceError,
  PackageError,
  CpuProfileError,
  ProbeTimeoutError,
  WebCallError,
  ProfileRequestError,
]);
