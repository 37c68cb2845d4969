// Test helpers: sign in to a cloud as an API key or a part, and call AppService / RobotService.
import { credentials, Metadata, type CallOptions, type ClientReadableStream } from '@grpc/grpc-js';
import { AppServiceClient, RobotServiceClient } from '../../../gen/platform/app/v1/robot_part.js';
import { AuthServiceClient } from '../../../gen/platform/rpc/v1/auth.js';

export type Login = { id: string; key: string } | { partId: string; secret: string };

export async function bearer(address: string, login: Login): Promise<Metadata> {
  const request =
    'secret' in login
      ? { entity: login.partId, credentials: { type: 'robot-secret', payload: login.secret } }
      : { entity: login.id, credentials: { type: 'api-key', payload: login.key } };
  const auth = new AuthServiceClient(address, credentials.createInsecure());
  try {
    const token = await new Promise<string>((resolve, reject) => auth.authenticate(request, (err, res) => (err ? reject(err) : resolve(res!.accessToken))));
    const md = new Metadata();
    md.set('authorization', `Bearer ${token}`);
    return md;
  } finally {
    auth.close();
  }
}

type Unary<Req, Res> = (req: Req, md: Metadata, options: Partial<CallOptions>, cb: (err: Error | null, res: Res) => void) => unknown;

/** Promise form of a unary call. */
export function call<Req, Res>(fn: Unary<Req, Res>, req: Req, md: Metadata): Promise<Res> {
  return new Promise((resolve, reject) => fn(req, md, { deadline: Date.now() + 30_000 }, (err, res) => (err ? reject(err) : resolve(res))));
}

export interface PartClients {
  app: AppServiceClient;
  robot: RobotServiceClient;
  md: Metadata;
  close(): void;
}

export async function partClients(address: string, login: Login): Promise<PartClients> {
  const md = await bearer(address, login);
  const app = new AppServiceClient(address, credentials.createInsecure());
  const robot = new RobotServiceClient(address, credentials.createInsecure());
  return {
    app,
    robot,
    md,
    close: () => {
      app.close();
      robot.close();
    },
  };
}

/** Collects the messages of a server stream until `until` says enough. */
export function collect<T>(stream: ClientReadableStream<T>, until: (items: T[]) => boolean): Promise<T[]> {
  const items: T[] = [];
  return new Promise((resolve, reject) => {
    stream.on('data', (item: T) => {
      items.push(item);
      if (until(items)) {
        stream.cancel();
        resolve(items);
      }
    });
    stream.on('error', (err: { code?: number }) => {
      if (err.code !== 1) reject(err); // 1 = CANCELLED, which we caused
    });
  });
}
