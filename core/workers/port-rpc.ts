// Calls between two driver workers over a MessagePort: a dependent holds the client end, the
// dependency's worker serves the other end. The main thread is not on this path.
import type { MessagePort } from 'node:worker_threads';
import { deserializeError, DriverError } from '../../plugins/errors.js';
import { unwrapTransfer } from '../../plugins/transfer.js';
import { invoke } from './invoke.js';
import { isSampleMessage, sampleClient, sampleSource, type SampleBatchMessage, type SamplerFunction } from './port-sampler.js';
import type { PortRequest, PortResponse } from './protocol.js';

/** Serves calls arriving on `port` with the driver that `target()` returns at the time of the call. */
export function servePort(port: MessagePort, target: () => object | undefined, resource?: string): void {
  const samples = sampleSource(port, target, resource);
  port.on('message', async (request: PortRequest) => {
    if (isSampleMessage(request)) return samples(request);
    const { outcome, transfer } = await invoke(target(), request.method, request.args, resource);
    const response: PortResponse = { id: request.id, outcome };
    try {
      port.postMessage(response, transfer);
    } catch {
      // The dependent went away while we worked; nobody is waiting for the answer.
    }
  });
}

/** Returns a `send` function that calls the driver served at the other end of `port`. */
export function portSender(port: MessagePort, dependencyName: string) {
  return portChannel(port, dependencyName).send;
}

/** Calls (`send`) and samplers (`sample`, see port-sampler.ts) of the driver served at the other end of `port`. */
export function portChannel(
  port: MessagePort,
  dependencyName: string,
): { send: (method: string, args: unknown[]) => Promise<unknown>; sample: SamplerFunction } {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const samples = sampleClient(port);
  port.on('message', (response: PortResponse | SampleBatchMessage) => {
    if ('sampleBatch' in response) return samples.onMessage(response);
    const call = pending.get(response.id);
    if (!call) return;
    pending.delete(response.id);
    if (pending.size === 0) port.unref();
    if (response.outcome.ok) call.resolve(response.outcome.value);
    else call.reject(deserializeError(response.outcome.error));
  });
  port.on('close', () => {
    for (const call of pending.values()) {
      call.reject(new DriverError('UNAVAILABLE', `${dependencyName} went away during the call (its worker ended)`));
    }
    pending.clear();
  });
  // An idle channel must not keep its thread alive (the kernel decides when a worker ends), but a call
  // in flight must, or a caller with nothing else to do would exit before the answer arrives.
  port.unref();
  const send = (method: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      // An argument wrapped with transfer() (a model input tensor, say) moves its buffers instead of copying them.
      const buffers: ArrayBuffer[] = [];
      const plain = args.map((arg) => {
        const { value, buffers: moved } = unwrapTransfer(arg);
        buffers.push(...moved);
        return value;
      });
      if (pending.size === 0) port.ref();
      pending.set(id, { resolve, reject });
      port.postMessage({ id, method, args: plain } satisfies PortRequest, buffers);
    });
  return { send, sample: samples.sample };
}
