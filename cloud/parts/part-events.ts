// New config revisions and new log entries of parts, for the streams (WatchConfig, TailRobotPartLogs).
// One emitter per store: admin commands run inside the serving process with the same Store (admin
// channel), so a `part config set` reaches the machines that watch.
import { EventEmitter } from 'node:events';
import type { TabularStore } from '../store/tabular.js';
import type { StoredLogEntry } from './log-entry.js';

export interface PartEventMap {
  config: [partId: string, revision: number];
  logs: [partId: string, entries: StoredLogEntry[]];
}

const emitters = new WeakMap<TabularStore, EventEmitter<PartEventMap>>();

export function partEvents(store: TabularStore): EventEmitter<PartEventMap> {
  let emitter = emitters.get(store);
  if (!emitter) {
    emitter = new EventEmitter<PartEventMap>();
    // Every watching machine and tailing user adds a listener; that is expected, not a leak.
    emitter.setMaxListeners(0);
    emitters.set(store, emitter);
  }
  return emitter;
}
