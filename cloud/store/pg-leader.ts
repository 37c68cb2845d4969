// One leader among equal processes, through a PostgreSQL session advisory lock (issue 33: the orphan
// sweep and the pipeline scheduler run on one process at a time). Each candidate holds a connection of
// its own and tries pg_try_advisory_lock on the duty's name every pollMs; the one that gets it leads for
// as long as its session lives. PostgreSQL releases a session lock when the session ends, and a process
// killed with kill -9 ends its sessions at once (the kernel closes its sockets), so a follower takes over
// at its next try.
//
// The leader checks its session every pollMs (SELECT 1, bounded by a timeout) and steps down when that
// fails: a leader cut off from the database cannot know whether its lock still stands, and after a
// failed check it must assume that it does not. Until the check fails, a leader cut off by the network
// may still believe it leads while another has taken over (at most pollMs plus the check's timeout, or
// as long as TCP takes to notice a silent peer): a duty run by the leader must be safe when two runs
// overlap briefly, as the orphan sweep is (it only removes blobs older than the orphan age).
//
// The `pg` client is a development dependency today; the scale-out mode that runs this in
// platform-cloud will make it a dependency.
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LeaderElectionOptions {
  /** PostgreSQL connection string. */
  url: string;
  /** The duty's name; candidates for the same name elect one leader (the lock key is its 64-bit hash). */
  name: string;
  /** How often a follower tries to take the lock and a leader checks its session. Default 100 ms. */
  pollMs?: number;
  /** Called when this process becomes the leader. */
  onLeader?: () => void;
  /** Called when this process stops being the leader (its session failed, or stop()). */
  onFollower?: () => void;
  /** Called with each failure to reach the database (it is retried every pollMs). */
  onError?: (err: Error) => void;
}

export class LeaderElection {
  private leader = false;
  private stopped = false;
  private client: pg.Client | undefined;
  private readonly loop: Promise<void>;
  private readonly pollMs: number;

  private constructor(private readonly options: LeaderElectionOptions) {
    this.pollMs = options.pollMs ?? 100;
    if (!Number.isFinite(this.pollMs) || this.pollMs <= 0) throw new Error(`pollMs must be a number of milliseconds > 0, got ${options.pollMs}`);
    if (options.name === '') throw new Error('name must name the duty the leader is elected for');
    this.loop = this.run();
  }

  /** Joins the election; runs until stop(). */
  static start(options: LeaderElectionOptions): LeaderElection {
    return new LeaderElection(options);
  }

  get isLeader(): boolean {
    return this.leader;
  }

  private setLeader(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    if (leader) this.options.onLeader?.();
    else this.options.onFollower?.();
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.url,
      keepAlive: true,
      connectionTimeoutMillis: Math.max(5_000, this.pollMs * 10),
      // Bounds a check on a connection that went silent.
      query_timeout: Math.max(2_000, this.pollMs * 10),
      application_name: `leader:${this.options.name}`.slice(0, 63),
    });
    // A broken connection is noticed by the next query; without a listener, 'error' would end the process.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.client ??= await this.connect();
        if (this.leader) {
          await this.client.query('SELECT 1');
        } else {
          const { rows } = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [this.options.name]);
          if (rows[0].locked && !this.stopped) this.setLeader(true);
        }
      } catch (err) {
        // The session (and any lock it held) is gone, or about to be: start over on a new one.
        this.setLeader(false);
        const client = this.client;
        this.client = undefined;
        void client?.end().catch(() => undefined);
        if (!this.stopped) this.options.onError?.(err as Error);
      }
      if (!this.stopped) await sleep(this.pollMs);
    }
  }

  /** Leaves the election; a leader releases the lock (by ending its session) before this resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    const client = this.client;
    this.client = undefined;
    // Ending the session releases its advisory locks.
    await client?.end().catch(() => undefined);
    this.setLeader(false);
  }
}
