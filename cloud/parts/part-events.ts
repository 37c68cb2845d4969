// New config revisions and new log entries of parts, for the streams (WatchConfig, TailRobotPartLogs).
// One emitter per store. A new config revision reaches the watchers of every process of the cloud: on
// the embedded store, admin commands run inside the serving process with the same Store (admin
// channel); on PostgreSQL (the scale-out mode), publishPartConfig also sends it on the store's channel
// (cloud/store/pg-notify.ts) and the emitter of every other process re-emits it. After a listening
// connection was lost, the parts whose config changed meanwhile are read from part_configs and emitted
// again; a watcher reads the latest revision on every event, so one event too many is harmless.
// Log entries are emitted here on the embedded store only (on PostgreSQL tails follow pg-part-logs.ts).
import { EventEmitter } from 'node:events';
import { storeChannels } from '../store/pg-notify.js';
import type { TabularStore } from '../store/tabular.js';
import type { StoredLogEntry } from './log-entry.js';

export interface PartEventMap {
  config: [partId: string, revision: number];
  logs: [partId: string, entries: StoredLogEntry[]];
}

/** The channel of new config revisions: payload `<revision> <part id>`. */
export const CONFIG_CHANNEL = 'platform_part_config';
/**
 * Clocks of two processes may differ: a catch-up after a lost connection looks this much further back
 * than the moment it was lost.
 */
export const CATCH_UP_SLACK_MS = 60_000;

const emitters = new WeakMap<TabularStore, EventEmitter<PartEventMap>>();

export function partEvents(store: TabularStore): EventEmitter<PartEventMap> {
  let emitter = emitters.get(store);
  if (!emitter) {
    const events = new EventEmitter<PartEventMap>();
    // Every watching machine and tailing user adds a listener; that is expected, not a leak.
    events.setMaxListeners(0);
    emitters.set(store, events);
    emitter = events;
    if (store.dialect === 'postgres') {
      const channels = storeChannels(store);
      channels.subscribe(CONFIG_CHANNEL, (payload) => {
        const space = payload.indexOf(' ');
        const revision = Number(payload.slice(0, space));
        if (space > 0 && Number.isInteger(revision)) events.emit('config', payload.slice(space + 1), revision);
      });
      channels.onResync((since) => void catchUp(store, events, since));
    }
  }
  return emitter;
}

/**
 * Tells every watcher of partId, in every process, that revision was saved (call after it committed).
 * Never rejects: the revision is saved whatever happens to the notification, and this process's
 * watchers have been told before the NOTIFY is sent.
 */
export async function publishPartConfig(store: TabularStore, partId: string, revision: number): Promise<void> {
  if (store.dialect !== 'postgres') {
    partEvents(store).emit('config', partId, revision);
    return;
  }
  // Only publish: this process's emitter (if any) is subscribed to the channel, and a process that only
  // saves (an admin command) need not listen.
  await storeChannels(store)
    .publish(CONFIG_CHANNEL, `${revision} ${partId}`)
    .catch(() => undefined);
}

async function catchUp(store: TabularStore, events: EventEmitter<PartEventMap>, since: Date): Promise<void> {
  try {
    const rows = await store.query('SELECT part_id, max(revision) AS revision FROM part_configs WHERE time_saved >= ? GROUP BY part_id', [
      new Date(since.getTime() - CATCH_UP_SLACK_MS),
    ]);
    for (const row of rows) events.emit('config', String(row.part_id), Number(row.revision));
  } catch {
    // The store is closing, or the database went away again (then the next reconnect catches up).
  }
}
