// Test helper: promisified calls on ts-proto grpc-js clients.
import { credentials, type ServiceError } from '@grpc/grpc-js';

type Callback<Res> = (err: ServiceError | null, res: Res) => void;

/** Calls a unary method: `await call(client, 'getReadings', { name })`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function call<Res = any, C extends object = object, M extends keyof C = keyof C>(client: C, method: M, request: unknown): Promise<Res> {
  return new Promise((resolve, reject) => {
    const fn = client[method] as unknown as (req: unknown, cb: Callback<Res>) => void;
    fn.call(client, request, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

export const insecure = () => credentials.createInsecure();
