// Sessions (SPEC-less; modelled on the reference platform): a client starts a session, sends its id
// with its calls as `platform-sid` metadata and heartbeats within the window. When a session goes
// silent for longer than its window, every actuator that it commanded last is stopped, so that a
// client that crashed, lost its network or was killed does not leave a motor running.
//
// "Commanded last" is tracked per resource: a later command from another session, or from a call
// without a session, takes the resource over, and then this session's expiry leaves it alone.
import { randomUUID } from 'node:crypto';
import type { DriverLogger } from '../../plugins/driver.js';
import { invalidArgument, notFound } from '../serving/status-error.js';

/** Stops one resource; failures are logged by the caller of expire, never thrown at a client. */
export type Stopper = (resource: string, api: string) => Promise<void>;

interface Session {
  readonly id: string;
  readonly windowMs: number;
  timer: NodeJS.Timeout;
}

export const SESSION_METADATA = 'platform-sid';

export class Sessions {
  private readonly live = new Map<string, Session>();
  /** resource name -> the session that commanded it last (absent: no session, or a sessionless call). */
  private readonly commander = new Map<string, { session: string; api: string }>();

  constructor(
    /** The configured heartbeat window, read when a session starts (a config change affects new sessions). */
    private readonly windowMs: () => number,
    private readonly stop: Stopper,
    private readonly log: DriverLogger,
  ) {}

  /** Starts a session, or resumes a live one. Resuming an unknown or expired id is NOT_FOUND. */
  start(resume?: string): { id: string; windowMs: number } {
    if (resume) {
      const session = this.live.get(resume);
      if (!session) throw notFound(`resume "${resume}": no live session with that id (it expired or never existed)`);
      this.touch(resume);
      return { id: session.id, windowMs: session.windowMs };
    }
    const id = randomUUID();
    const windowMs = this.windowMs();
    this.live.set(id, { id, windowMs, timer: this.arm(id, windowMs) });
    this.log.debug('session started', { session: id, heartbeat_window_ms: windowMs });
    return { id, windowMs };
  }

  /** A heartbeat, or any call carrying the id. An unknown or expired id is refused, naming the metadata. */
  touch(id: string, field = `metadata ${SESSION_METADATA}`): void {
    if (!id) throw invalidArgument(`${field} is required`);
    const session = this.live.get(id);
    if (!session) throw invalidArgument(`${field} "${id}": no live session with that id (it expired or never existed); start a new session`);
    clearTimeout(session.timer);
    session.timer = this.arm(id, session.windowMs);
  }

  /** Records who commanded an actuator last: a session id, or undefined for a call without a session. */
  commanded(session: string | undefined, resource: string, api: string): void {
    if (session) this.commander.set(resource, { session, api });
    else this.commander.delete(resource);
  }

  /** The ids of live sessions, for diagnostics and tests. */
  ids(): string[] {
    return [...this.live.keys()];
  }

  close(): void {
    for (const session of this.live.values()) clearTimeout(session.timer);
    this.live.clear();
    this.commander.clear();
  }

  private arm(id: string, windowMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => void this.expire(id), windowMs);
    timer.unref();
    return timer;
  }

  /** Ends a silent session and stops what it commanded last; returns when every stop has answered. */
  async expire(id: string): Promise<void> {
    if (!this.live.delete(id)) return;
    const owned = [...this.commander].filter(([, c]) => c.session === id);
    for (const [resource] of owned) this.commander.delete(resource);
    if (owned.length === 0) {
      this.log.debug('session expired; it commanded no actuator', { session: id });
      return;
    }
    this.log.warn('session expired without a heartbeat; stopping the actuators it commanded last', { session: id, resources: owned.map(([r]) => r) });
    await Promise.all(
      owned.map(([resource, { api }]) =>
        this.stop(resource, api).catch((err: unknown) =>
          this.log.error('could not stop an actuator of an expired session', { session: id, resource, error: (err as Error).message }),
        ),
      ),
    );
  }
}
