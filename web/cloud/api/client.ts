// The data browser's calls: gRPC-Web to the cloud's own services (the same implementations every gRPC
// client reaches), each carrying `authorization: Bearer <token>` of the signed-in key. A token that
// expired while the tab was open is renewed once from the key kept in sessionStorage, then the call is
// retried; any other refusal is shown as the cloud worded it.
import { RpcError, unary, type Codec } from '../../shared/grpc-web-client.js';
import type { Session } from '../session.js';

/** One RPC: its gRPC path and the generated codecs of its messages. */
export interface Method<Req, Res> {
  path: string;
  req: Codec<Req>;
  res: Codec<Res>;
}

export function method<Req, Res>(service: string, name: string, req: Codec<Req>, res: Codec<Res>): Method<Req, Res> {
  return { path: `/${service}/${name}`, req, res };
}

/** Partial messages, nested ones included (what the generated fromPartial accepts). */
export type Partial2<T> = T extends Date | Uint8Array | string | number | boolean | undefined
  ? T
  : T extends (infer U)[]
    ? Partial2<U>[]
    : T extends object
      ? { [K in keyof T]?: Partial2<T[K]> }
      : T;

const UNAUTHENTICATED = 16;

export class CloudApi {
  constructor(
    private session: Session,
    /** Trades the stored key for a new token (AuthService/Authenticate). */
    private readonly renew: (session: Session) => Promise<Session>,
  ) {}

  get organizationId(): string {
    return this.session.orgId;
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.session.token}` };
  }

  async call<Req, Res>(m: Method<Req, Res>, message: Partial2<Req>): Promise<Res> {
    try {
      return await unary(m.path, m.req, m.res, message as object, this.headers());
    } catch (err) {
      if (!(err instanceof RpcError) || err.code !== UNAUTHENTICATED || !/expired/i.test(err.message)) throw err;
      this.session = await this.renew(this.session);
      return unary(m.path, m.req, m.res, message as object, this.headers());
    }
  }

  /**
   * A thumbnail of an image (GET /thumbnails/<id>?size=N, the same key checks as BinaryDataByIDs) as an
   * object URL for an <img>; the caller revokes it when the image goes away.
   */
  async thumbnail(binaryDataId: string, size: number): Promise<string> {
    const get = () => fetch(`thumbnails/${encodeURIComponent(binaryDataId)}?size=${size}`, { headers: this.headers() });
    let response = await get();
    if (response.status === 401 && /expired/i.test(await response.clone().text())) {
      this.session = await this.renew(this.session);
      response = await get();
    }
    if (!response.ok) throw new Error(`thumbnail of ${binaryDataId}: ${(await response.text()).trim()} (HTTP ${response.status})`);
    return URL.createObjectURL(await response.blob());
  }
}
