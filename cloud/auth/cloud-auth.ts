// The cloud's token signer and login gate for its store, in one call for cloud/server/cloud-server.ts:
// the embedded default keeps <data-dir>/token-secret and counts failed logins in its process; the
// scale-out mode (a PgStore) keeps both in PostgreSQL, shared by every process of the cloud.
import type { TabularStore } from '../store/tabular.js';
import { loginGateForStore } from './login-backoff-pg.js';
import type { LoginGate } from './login-backoff.js';
import { TokenSigner } from './token.js';

export interface CloudAuth {
  tokens: TokenSigner;
  loginGate: LoginGate;
}

export async function cloudAuthFor(store: TabularStore, dataDir: string, tokenTtlSeconds?: number, env: NodeJS.ProcessEnv = process.env): Promise<CloudAuth> {
  const tokens = store.dialect === 'postgres' ? await TokenSigner.forStore(store, tokenTtlSeconds) : TokenSigner.forDataDir(dataDir, tokenTtlSeconds);
  return { tokens, loginGate: loginGateForStore(store, env) };
}
