// platform.rpc.v1.AuthService: trades an API key (or a part secret) for a signed, expiring access token.
// Logins pass a LoginGate first (login-backoff.ts) and scrypt runs at most `maxConcurrentHashes` at a
// time: scrypt runs on libuv's small thread pool, which DuckDB and file I/O share, so a flood of wrong
// keys must wait its turn (or be refused) instead of slowing every other tenant's calls.
import { echo } from '../../core/serving/bounded-text.js';
import { AuthServiceService, type AuthServiceServer, type AuthenticateRequest, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import type { Server, ServiceError } from '@grpc/grpc-js';
import { invalidArgument, resourceExhausted, toServiceError, unauthenticated } from '../../core/serving/status-error.js';
import { callerAddress } from '../../core/serving/web/forwarded-for.js';
import { RefusalPacer } from '../../core/serving/refusal-pacer.js';
import type { TabularStore } from '../store/tabular.js';
import { LoginBackoff, peerAddress, type LoginGate } from './login-backoff.js';
import { verifySecret } from './secret-hash.js';
import type { TokenSigner } from './token.js';

export const credentialTypes = { apiKey: 'api-key', partSecret: 'robot-secret' } as const;

/**
 * Longest entity and payload read. Ids are UUIDs (36 characters) and keys and secrets 43; a longer one is
 * refused before the back-off gate (whose maps it would otherwise be a key of), the database lookup and
 * scrypt (whose work grows with the payload).
 */
export const MAX_ENTITY_CHARS = 256;
export const MAX_PAYLOAD_CHARS = 1024;

/** Bounds the scrypt verifications in flight and the logins queued for one. */
export class HashSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxConcurrent = 2,
    readonly maxQueued = 64,
  ) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) {
      if (this.waiting.length >= this.maxQueued) {
        throw resourceExhausted(`login: ${this.maxQueued} logins are already waiting for a key check; retry in a second`);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export interface AuthDeps {
  store: TabularStore;
  tokens: TokenSigner;
  gate: LoginGate;
  hashes: HashSlots;
}

export async function authenticate(deps: AuthDeps, request: AuthenticateRequest, address = 'unknown'): Promise<AuthenticateResponse> {
  const entity = request.entity;
  const type = request.credentials?.type ?? '';
  const payload = request.credentials?.payload ?? '';
  if (!entity) throw invalidArgument('entity is required: the API key id (or the machine part id)');
  if (type !== credentialTypes.apiKey && type !== credentialTypes.partSecret) {
    throw invalidArgument(`credentials.type must be "${credentialTypes.apiKey}" or "${credentialTypes.partSecret}", got "${type}"`);
  }
  if (!payload) throw invalidArgument('credentials.payload is required: the API key (or part secret)');
  if (entity.length > MAX_ENTITY_CHARS) {
    throw invalidArgument(`entity: at most ${MAX_ENTITY_CHARS} characters (an API key id or a machine part id), got ${entity.length}`);
  }
  if (payload.length > MAX_PAYLOAD_CHARS) {
    throw invalidArgument(`credentials.payload: at most ${MAX_PAYLOAD_CHARS} characters (an API key or a part secret), got ${payload.length}`);
  }
  await deps.gate.check(entity, address);
  const table =
    type === credentialTypes.apiKey
      ? 'SELECT key_hash AS h FROM api_keys WHERE id = ? AND revoked_at IS NULL'
      : 'SELECT secret_hash AS h FROM machine_parts WHERE id = ?';
  const rows = await deps.store.query(table, [entity]);
  // The same answer for an unknown entity and a wrong secret, so callers cannot probe for ids.
  const ok = rows.length > 0 && (await deps.hashes.run(() => verifySecret(payload, String(rows[0].h))));
  if (!ok) {
    await deps.gate.failed(entity, address);
    // The entity is the caller's input: echoed bounded (a 128 KiB one once wedged the web port's channel).
    throw unauthenticated(`invalid credentials for entity ${echo(entity)}`);
  }
  await deps.gate.succeeded(entity, address);
  const kind = type === credentialTypes.apiKey ? 'api-key' : 'part';
  return { accessToken: deps.tokens.sign(entity, kind), expiresInSeconds: deps.tokens.ttlSeconds };
}

/**
 * `refusals` paces the answers to refused logins per caller address (refusal-pacer.ts): past an
 * allowance they come later and later, so a loop of refused logins (the back-off's, or 128 KiB names)
 * waits for its answers instead of keeping a core busy.
 */
export function addAuthService(
  server: Server,
  store: TabularStore,
  tokens: TokenSigner,
  gate: LoginGate = LoginBackoff.fromEnv(),
  refusals: RefusalPacer = new RefusalPacer(),
): void {
  const deps: AuthDeps = { store, tokens, gate, hashes: new HashSlots() };
  const impl: AuthServiceServer = {
    authenticate: (call, callback) => {
      // A login through the cloud's web page counts against the browser's address, not the loopback hop's.
      const address = callerAddress(peerAddress(call.getPeer()), call.metadata);
      authenticate(deps, call.request, address).then(
        (response) => callback(null, response),
        (err) => refusals.pace(address, () => callback(toServiceError(err) as ServiceError), call, 'cancelled'),
      );
    },
  };
  server.addService(AuthServiceService, impl);
}
