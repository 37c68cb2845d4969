// The cloud side's error catalogue (in the manner of avvio's lib/errors.js): the errors cloud/ throws to
// its callers, by stable code, with the template of their message. Callers and tests tell them apart by
// `errorCode`; the message names what the error concerns (the file, path or request) and the rule. The
// mechanism is core/serving/error-catalogue.ts, shared with the machine's catalogue
// (core/serving/errors.ts). The modules that throw these re-export them under their old names.
//
// Left out on purpose: StatusError (core/serving/status-error.ts), which carries a gRPC status rather
// than a kind of failure; the TypeScript client's ValueError and FileNotFoundError (cloud/client/errors.ts),
// named after the Python SDK's exceptions they mirror; and training-run.ts's private JobFailure, which
// never leaves its module.
import { catalogueCodes, defineError } from '../../core/serving/error-catalogue.js';

// --- administration and authentication ---

/** An admin-channel action that failed; `code` is the gRPC status it is reported with, when it has one. */
export const AdminError = defineError<[message: string, code?: number], { code?: number }>(
  'CLOUD_ERR_ADMIN',
  'AdminError',
  (message) => message,
  (_message, code) => ({ code }),
);
export type AdminError = InstanceType<typeof AdminError>;

/** A token that cannot be verified (signature, expiry, audience: the message says which). */
export const TokenError = defineError('CLOUD_ERR_TOKEN', 'TokenError', (message: string) => message);
export type TokenError = InstanceType<typeof TokenError>;

// --- agent releases ---

/** A version spec that names no release of a subsystem for a platform. */
export const ReleaseResolutionError = defineError('CLOUD_ERR_RELEASE_RESOLUTION', 'ReleaseResolutionError', (message: string) => message);
export type ReleaseResolutionError = InstanceType<typeof ReleaseResolutionError>;

// --- datasets ---

/** A dataset import file that breaks a rule of its format. */
export const ImportError = defineError(
  'CLOUD_ERR_DATASET_IMPORT',
  'ImportError',
  (file: string, reason: string) => `${file}: ${reason}`,
  (file, reason) => ({ file, reason }),
);
export type ImportError = InstanceType<typeof ImportError>;

/** A zip refused before anything of it is extracted (its size, entry count, names or ratio). */
export const ZipRefusedError = defineError(
  'CLOUD_ERR_ZIP_REFUSED',
  'ZipRefusedError',
  (file: string, reason: string) => `${file}: ${reason}`,
  (file, reason) => ({ file, reason }),
);
export type ZipRefusedError = InstanceType<typeof ZipRefusedError>;

// --- the store ---

export const StoreLockedError = defineError(
  'CLOUD_ERR_STORE_LOCKED',
  'StoreLockedError',
  (path: string, cause: unknown) => `the database ${path} is in use by another process: ${(cause as Error).message}`,
  (path) => ({ path }),
);
export type StoreLockedError = InstanceType<typeof StoreLockedError>;

// --- the web port ---

/** A thumbnail request that cannot be answered: the HTTP status and a message naming the rule. */
export const ThumbnailError = defineError(
  'CLOUD_ERR_THUMBNAIL',
  'ThumbnailError',
  (_httpStatus: number, message: string) => message,
  (httpStatus) => ({ httpStatus }),
);
export type ThumbnailError = InstanceType<typeof ThumbnailError>;

// --- the PostgreSQL endpoint ---

/** An error the PostgreSQL endpoint answers with; `code` is its SQLSTATE. */
export const PgError = defineError(
  'CLOUD_ERR_PG',
  'PgError',
  (_code: string, message: string) => message,
  (code) => ({ code }),
);
export type PgError = InstanceType<typeof PgError>;

/** A message from a PostgreSQL client that breaks the wire protocol. */
export const ProtocolViolation = defineError('CLOUD_ERR_PG_PROTOCOL', 'ProtocolViolation', (message: string) => message);
export type ProtocolViolation = InstanceType<typeof ProtocolViolation>;

/** Every code of the cloud's catalogue (each once; the catalogue's test checks it). */
export const CLOUD_ERROR_CODES = catalogueCodes([
  AdminError,
  TokenError,
  ReleaseResolutionError,
  ImportError,
  ZipRefusedError,
  StoreLockedError,
  ThumbnailError,
  PgError,
  ProtocolViolation,
]);
