// What a link to the cloud needs, as plain data: the part, the address, the credentials and whether
// plaintext to a remote host is allowed (-allow-insecure-creds). It is serialisable on purpose: a worker
// (the data manager's sync runs in the data manager's driver worker) receives these settings in its
// attributes and builds the same CloudLink there, with the same plaintext rule.
import * as z from 'zod';

export const cloudLinkSettings = z.object({
  partId: z.string(),
  appAddress: z.string(),
  /** AuthService/Authenticate's entity and credentials: the part's secret, or the machine's API key. */
  credentials: z.object({ type: z.enum(['robot-secret', 'api-key']), entity: z.string(), payload: z.string() }),
  /** -allow-insecure-creds: credentials may go in plaintext to an address that is not loopback. */
  allowInsecure: z.boolean(),
});

export type CloudLinkSettings = z.output<typeof cloudLinkSettings>;

/** The `cloud` section of a machine config (a local config's, or a credentials file's). */
export interface CloudSection {
  id: string;
  secret?: string;
  api_key?: { id: string; key: string };
  app_address?: string;
}

/** What AuthService/Authenticate is sent: the part's secret as `robot-secret`, otherwise the API key. */
export function partCredentials(cloud: Omit<CloudSection, 'app_address'>): CloudLinkSettings['credentials'] {
  return cloud.secret
    ? { type: 'robot-secret', entity: cloud.id, payload: cloud.secret }
    : { type: 'api-key', entity: cloud.api_key?.id ?? '', payload: cloud.api_key?.key ?? '' };
}

/** Link settings for a config's `cloud` section; undefined without one or without an app_address (offline). */
export function linkSettingsOf(cloud: CloudSection | undefined, allowInsecure: boolean): CloudLinkSettings | undefined {
  if (!cloud?.app_address) return undefined;
  return { partId: cloud.id, appAddress: cloud.app_address, credentials: partCredentials(cloud), allowInsecure };
}
