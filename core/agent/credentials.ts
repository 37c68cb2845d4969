// The --config file: machine cloud credentials, or (offline use, tests) a whole machine config whose
// `agent` object the agent uses directly. SPEC.md Authentication items 4 and 5.
//
// Credentials file shape (also read by platform-server's -config):
//   { "cloud": { "app_address": "http://host:port", "id": "<part id>",
//                "api_key": { "id": "<API key id>", "key": "<API key>" } } }
// or, with the part's own secret instead of an API key: { "cloud": { ..., "secret": "<part secret>" } }
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { CredentialsError } from './errors.js';
import { configErrorsFromZod } from '../../plugins/validation.js';

export const CREDENTIAL_ENV = { keyId: 'PLATFORM_API_KEY_ID', key: 'PLATFORM_API_KEY', partId: 'PLATFORM_PART_ID' } as const;
/** Cloud address used when credentials come from the environment; PLATFORM_APP_ADDRESS overrides it. */
export const APP_ADDRESS_ENV = 'PLATFORM_APP_ADDRESS';
export const DEFAULT_APP_ADDRESS = 'https://app.platform.local:443';

const cloudSchema = z
  .object({
    app_address: z.string({ error: 'is required for the agent to reach the cloud' }).min(1, { error: 'must not be empty' }),
    id: z.string({ error: 'must be a string (the part id)' }).min(1, { error: 'must not be empty' }),
    api_key: z
      .strictObject(
        {
          id: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
          key: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
        },
        { error: 'must be an object {id, key}' },
      )
      .optional(),
    secret: z.string({ error: 'must be a string (the part secret)' }).min(1, { error: 'must not be empty' }).optional(),
  })
  .refine((c) => !!c.api_key !== !!c.secret, { error: 'needs either api_key {id, key} or secret (the part secret), not both', path: ['api_key'] });

/** Machine credentials: an API key (SPEC.md Authentication item 4), or the part's own secret. */
export interface CloudCredentials {
  appAddress: string;
  partId: string;
  apiKeyId?: string;
  apiKey?: string;
  secret?: string;
}

/** What the --config file holds: cloud credentials (online) or a whole machine config (offline). */
export type MachineSource =
  { mode: 'online'; file: string; credentials: CloudCredentials } | { mode: 'offline'; file: string; machineConfig: Record<string, unknown> };

export function credentialsFromEnv(env: NodeJS.ProcessEnv): CloudCredentials | undefined {
  const keyId = env[CREDENTIAL_ENV.keyId];
  const key = env[CREDENTIAL_ENV.key];
  const partId = env[CREDENTIAL_ENV.partId];
  if (!keyId && !key && !partId) return undefined;
  const missing = Object.values(CREDENTIAL_ENV).filter((name) => !env[name]);
  if (missing.length) throw new CredentialsError('environment', `${missing.join(', ')} must also be set`);
  return { appAddress: env[APP_ADDRESS_ENV] || DEFAULT_APP_ADDRESS, partId: partId!, apiKeyId: keyId!, apiKey: key! };
}

/** The credentials file content for `creds`, as platform-server's -config reads it. */
export function credentialsFileContent(creds: CloudCredentials): string {
  const auth = creds.secret ? { secret: creds.secret } : { api_key: { id: creds.apiKeyId, key: creds.apiKey } };
  const doc = { cloud: { app_address: creds.appAddress, id: creds.partId, ...auth } };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** Classifies a parsed --config document. */
export function machineSourceOf(file: string, doc: unknown): MachineSource {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new CredentialsError(file, 'must hold a JSON object');
  const obj = doc as Record<string, unknown>;
  if ('agent' in obj) return { mode: 'offline', file, machineConfig: obj };
  if (!('cloud' in obj)) {
    throw new CredentialsError(file, 'needs a "cloud" object (machine credentials) or an "agent" object (offline machine config)');
  }
  const parsed = cloudSchema.safeParse(obj.cloud);
  if (!parsed.success) throw new CredentialsError(file, configErrorsFromZod(parsed.error, 'cloud', obj.cloud)[0].message);
  const c = parsed.data;
  const auth = c.api_key ? { apiKeyId: c.api_key.id, apiKey: c.api_key.key } : { secret: c.secret };
  return { mode: 'online', file, credentials: { appAddress: c.app_address, partId: c.id, ...auth } };
}

/** Reads the --config file. A missing file falls back to the install-time environment variables. */
export async function loadMachineSource(file: string, env: NodeJS.ProcessEnv): Promise<MachineSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new CredentialsError(file, (err as Error).message);
    const creds = credentialsFromEnv(env);
    if (!creds) {
      throw new CredentialsError(file, `does not exist; write machine credentials there or set ${Object.values(CREDENTIAL_ENV).join(', ')}`);
    }
    return { mode: 'online', file, credentials: creds };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CredentialsError(file, `is not valid JSON: ${(err as Error).message}`);
  }
  return machineSourceOf(file, doc);
}
