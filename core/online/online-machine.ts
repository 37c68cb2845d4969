// An online machine: its config from the cloud (OnlineConfig), its status reported (StatusReporter)
// and its log lines shipped (LogQueue + LogShipper), all as its part.
import { join } from 'node:path';
import type { InjectionToken } from 'tsyringe';
import type { ConfigFile } from '../config/config-file.js';
import type { Machine } from '../kernel/machine.js';
import type { LogSink } from '../logging/sink.js';
import { InvalidConfigError } from '../config/machine-config.js';
import { CloudLink } from '../cloud-link/cloud-link.js';
import { InsecureCredentialsError } from '../cloud-link/address.js';
import { ConfigCache, onlineDir } from './config-cache.js';
import { onlineCredentials } from './credentials.js';
import { DEFAULT_MAX_LINES, LogQueue } from './log-queue.js';
import { LogShipper, queuedLine } from './log-shipper.js';
import { OnlineConfig } from './online-config.js';
import { StatusReporter, type StatusInputs } from './status-reporter.js';
import { logQueueLines } from '../kernel/machine-metrics.js';

export interface OnlineOptions {
  allowInsecureCreds: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The DI token of the runtime's OnlineMachine; registered only for an online machine. */
export const ONLINE_MACHINE: InjectionToken<OnlineMachine> = 'OnlineMachine';

/** How long shutdown waits for a batch already on its way to the cloud. */
const STOP_GRACE_MS = 2000;

export class OnlineMachine {
  private reporter?: StatusReporter;
  private shipper?: LogShipper;

  private constructor(
    readonly config: OnlineConfig,
    private readonly link: CloudLink | undefined,
    private readonly queue: LogQueue | undefined,
    private readonly sink: LogSink,
  ) {
    // The queue's depth at each scrape of /metrics, until close().
    this.unobserve = queue ? logQueueLines.observe(() => queue.size) : () => undefined;
  }

  private readonly unobserve: () => void;

  /** An OnlineMachine when the -config file holds only credentials; undefined for a local config. */
  static forFile(file: ConfigFile, sink: LogSink, options: OnlineOptions): OnlineMachine | undefined {
    let loaded;
    try {
      loaded = file.read();
    } catch (err) {
      if (err instanceof InvalidConfigError) return undefined; // the runtime reports it at start
      throw err;
    }
    const creds = onlineCredentials(loaded.raw, loaded.config, options.allowInsecureCreds);
    if (!creds) return undefined;
    const env = options.env ?? process.env;
    const dir = onlineDir(env);
    const log = sink.logger('platform.online', () => (loaded.config.debug ? 'debug' : 'info'));
    let link: CloudLink | undefined;
    let linkError: string | undefined;
    try {
      link = new CloudLink(creds);
    } catch (err) {
      if (!(err instanceof InsecureCredentialsError) && !/app_address/.test((err as Error).message)) throw err;
      linkError = (err as Error).message;
    }
    let queue: LogQueue | undefined;
    if (link) {
      const max = Number(env.PLATFORM_LOG_QUEUE_MAX_LINES) || DEFAULT_MAX_LINES;
      queue = new LogQueue(join(dir, `logs-${encodeURIComponent(creds.partId)}`), max, (dropped) =>
        log.warn(`dropped ${dropped} log lines: the local log queue was full (${max} lines) while the cloud could not take them`, { dropped }),
      );
      const q = queue;
      sink.tap((record, time) => q.push(queuedLine(record, time)));
    }
    const config = new OnlineConfig(file, link, new ConfigCache(dir, creds.partId), log, linkError);
    return new OnlineMachine(config, link, queue, sink);
  }

  /** Before the runtime starts: the cached config, then one attempt at the cloud's. */
  init(): Promise<void> {
    return this.config.init();
  }

  /** Once the runtime serves: report its status and ship its logs. */
  started(machine: Machine, inputs: Omit<StatusInputs, 'revision'>): void {
    if (!this.link || !this.queue) return;
    const log = this.sink.logger('platform.online', () => 'info');
    this.reporter = new StatusReporter(this.link, machine, { ...inputs, revision: () => this.config.revision }, log);
    this.reporter.start();
    this.shipper = new LogShipper(this.link, this.queue, log);
    this.shipper.start();
  }

  /** Reports the status now (debounced): after a config revision was applied or refused. */
  reportSoon(): void {
    this.reporter?.soon();
  }

  /** The machine's link to its cloud; undefined when its address or credentials cannot make one. */
  get cloudLink(): CloudLink | undefined {
    return this.link;
  }

  get shippedLines(): number {
    return this.shipper?.shipped ?? 0;
  }

  async close(): Promise<void> {
    this.reporter?.stop();
    const stopping = this.shipper?.stop() ?? this.queue?.close();
    await Promise.race([stopping, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
    await this.queue?.flush();
    this.link?.close();
    this.unobserve();
  }
}
