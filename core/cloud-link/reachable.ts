// "The cloud serves": a hint that every successful call through a CloudLink sends, so that a follower
// waiting to reconnect (the online config's watch, core/online/reconnect.ts) tries at once instead of
// sleeping out its backoff. The signal is a BroadcastChannel, so it crosses worker threads: the data
// manager's sync runs its own link in its own worker.
import { BroadcastChannel } from 'node:worker_threads';

/** A thread says "reachable" at most this often: the signal is a hint, not a message per call. */
const SIGNAL_EVERY_MS = 500;
const CHANNEL = 'platform:cloud-reachable';

let sender: BroadcastChannel | undefined;
let lastSignal = 0;

/** A call of this machine just reached the cloud: followers waiting to retry may try now. */
export function cloudReachable(now = Date.now()): void {
  if (now - lastSignal < SIGNAL_EVERY_MS) return;
  lastSignal = now;
  if (!sender) {
    sender = new BroadcastChannel(CHANNEL);
    sender.unref();
  }
  sender.postMessage(now);
}

/** Calls `listener` when any thread of this process says the cloud was reached; returns the unsubscribe. */
export function onCloudReachable(listener: () => void): () => void {
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  channel.onmessage = () => listener();
  return () => channel.close();
}
