// The machine config of an online machine: fetched from the cloud as the part, cached durably, and
// followed through the cloud's WatchConfig stream. To the runtime it is a ConfigSource like the local
// file: each new revision calls onChange, and the runtime diffs, waits for the maintenance window and
// reconfigures exactly as for a saved file.
import type { ClientReadableStream } from '@grpc/grpc-js';
import type { ConfigResponse } from '../../gen/platform/app/v1/robot_part.js';
import type { DriverLogger } from '../../plugins/contract.js';
import type { ConfigFile, LoadedConfig } from '../config/config-file.js';
import type { ConfigOrigin } from '../config/config-edit.js';
import type { ConfigSource } from '../config/config-source.js';
import { parseMachineConfig } from '../config/machine-config.js';
import { CredentialsRefusedError, type CloudLink } from '../cloud-link/cloud-link.js';
import type { CachedConfig, ConfigCache } from './config-cache.js';
import { onCloudReachable } from '../cloud-link/reachable.js';
import { RETRY_MIN_MS, retryDelay } from './reconnect.js';

export { RETRY_MAX_MS, RETRY_MIN_MS } from './reconnect.js';
/** A stream that stayed open this long was a working connection: the next retry starts from the minimum again. */
const HEALTHY_STREAM_MS = 10_000;

export class OnlineConfig implements ConfigSource {
  private current?: CachedConfig;
  private problemText?: string;
  private onChange?: () => void;
  private stopped = false;
  private stream?: ClientReadableStream<ConfigResponse>;
  private wake?: () => void;
  private offReachable?: () => void;
  /** init() could not reach the cloud and announced its retry in RETRY_MIN_MS: follow() keeps that word. */
  private initFailed = false;
  private accepting: Promise<void> = Promise.resolve();
  private following?: Promise<void>;
  /** The `network` object of the credentials file: this machine's own, it wins over the cloud's. */
  private readonly localNetwork?: unknown;
  /**
   * The credentials file's `cloud` section. The served config carries it, so that the services that talk to
   * the cloud as this part (the data manager, packages) find the same credentials as in a local config.
   * It is left out when the link was refused (plaintext to a remote host without -allow-insecure-creds):
   * no service may send the secret where the runtime itself would not.
   */
  private readonly localCloud?: unknown;
  /** The -config file, which holds only the credentials (and network). */
  private readonly credentialsPath: string;

  constructor(
    file: ConfigFile,
    private readonly link: CloudLink | undefined,
    private readonly cache: ConfigCache,
    private readonly log: DriverLogger,
    /** Why there is no link (credentials refused to be sent in plaintext). */
    private readonly linkError?: string,
    /** The jitter of the reconnect waits (reconnect.ts); tests fix it. */
    private readonly random: () => number = Math.random,
  ) {
    this.credentialsPath = file.path;
    const raw = file.read().raw as { network?: unknown; cloud?: unknown };
    this.localNetwork = raw.network;
    if (link) this.localCloud = raw.cloud;
  }

  /** The part's name from the cloud (with the newest revision, or the cached one), if known. */
  get partName(): string | undefined {
    return this.current?.partName;
  }

  /** The revision running from the cloud (0: none). */
  get revision(): number {
    return this.current?.revision ?? 0;
  }

  /** Loads the cache, then asks the cloud once; the runtime starts with whatever this found. */
  async init(): Promise<void> {
    this.current = this.cache.read();
    if (this.current) this.log.info('cached cloud config found', { revision: this.current.revision, path: this.cache.path });
    if (!this.link) {
      this.log.error(this.linkError ?? 'no cloud link');
      this.setProblem(this.linkError ?? 'no cloud link');
      return;
    }
    try {
      await this.accept(await this.link.unary(this.link.robot.config, { id: this.link.partId }));
    } catch (err) {
      this.initFailed = true;
      this.failed(err, RETRY_MIN_MS);
    }
  }

  read(): LoadedConfig {
    const raw: Record<string, unknown> = { ...(this.current?.config ?? {}) };
    delete raw.cloud; // the cloud never stores one; defensive against an old cache
    if (this.localCloud !== undefined) raw.cloud = this.localCloud;
    if (this.localNetwork !== undefined) raw.network = this.localNetwork;
    return { config: parseMachineConfig(raw), raw, text: JSON.stringify(raw) };
  }

  origin(): ConfigOrigin {
    const part = this.link ? ` (part ${this.link.partId} at ${this.link.appAddress})` : '';
    return {
      source: 'cloud',
      path: this.credentialsPath,
      editHint: `this machine is online: its config comes from the cloud${part}; edit it there (the cloud's page, UpdateRobotPart, or platform-cloud part config set)`,
    };
  }

  problem(): string | undefined {
    return this.problemText;
  }

  watch(onChange: () => void): Promise<void> {
    this.onChange = onChange;
    if (this.link) this.following = this.follow(this.link);
    return Promise.resolve();
  }

  private setProblem(reason: string | undefined): void {
    if (this.current && this.current.revision > 0) {
      this.problemText = undefined;
    } else if (this.current) {
      this.problemText = `no machine config: the cloud holds no config for part ${this.link?.partId ?? ''} yet; save one with UpdateRobotPart or platform-cloud part config set`;
    } else {
      this.problemText = `no machine config: ${reason ?? 'the cloud has not answered yet'}; there is no cached config at ${this.cache.path}; retrying`;
    }
  }

  /** Takes a config answer: a newer revision is cached durably, then applied. */
  private accept(res: ConfigResponse): Promise<void> {
    this.accepting = this.accepting.then(async () => {
      if (this.current && res.revision <= this.current.revision) return;
      const next: CachedConfig = {
        partId: this.link!.partId,
        revision: res.revision,
        time: res.time?.toISOString(),
        config: res.config ?? {},
        ...(res.partName ? { partName: res.partName } : {}),
      };
      await this.cache.write(next);
      this.current = next;
      this.setProblem(undefined);
      this.log.info('new config revision from the cloud', { revision: next.revision });
      this.onChange?.();
    });
    return this.accepting;
  }

  private failed(err: unknown, retryMs: number): void {
    const address = this.link?.appAddress;
    if (err instanceof CredentialsRefusedError) {
      this.log.error(`${err.message}; retrying in ${retryMs / 1000} s`, { app_address: address });
    } else {
      this.log.warn(`cannot reach the cloud; retrying in ${retryMs / 1000} s`, { app_address: address, error: (err as Error).message });
    }
    this.setProblem(err instanceof CredentialsRefusedError ? err.message : `the cloud at ${address} is unreachable (${(err as Error).message})`);
  }

  /**
   * Follows new revisions until close(), reconnecting after a failure on reconnect.ts' schedule (at most
   * 10 s apart), and at once when another call of this machine reached the cloud meanwhile.
   */
  private async follow(link: CloudLink): Promise<void> {
    let failures = 0;
    let backoff = retryDelay(failures, this.random);
    this.offReachable = onCloudReachable(() => this.wake?.());
    if (this.initFailed) {
      // Without this wait a refused or unreachable cloud would get two attempts in a row at start.
      await this.pause(RETRY_MIN_MS);
      backoff = retryDelay(++failures, this.random);
    }
    while (!this.stopped) {
      const opened = Date.now();
      try {
        const md = await link.metadata();
        await new Promise<void>((resolve, reject) => {
          const stream = link.robot.watchConfig({ id: link.partId, knownRevision: this.revision }, md);
          this.stream = stream;
          // The cloud sends its headers as soon as it has accepted the stream.
          stream.on('metadata', () => {
            failures = 0;
            backoff = retryDelay(failures, this.random);
            this.log.info('following config revisions from the cloud', { app_address: link.appAddress, revision: this.revision });
          });
          stream.on(
            'data',
            (res: ConfigResponse) => void this.accept(res).catch((err) => this.log.error('cannot cache the new config revision', { error: String(err) })),
          );
          stream.on('error', reject);
          stream.on('end', () => resolve());
        });
        if (this.stopped) break;
        this.log.warn('the cloud ended the config stream; reconnecting');
      } catch (err) {
        if (this.stopped) break;
        link.refused(err);
        if (Date.now() - opened > HEALTHY_STREAM_MS) {
          failures = 0;
          backoff = retryDelay(failures, this.random);
        }
        this.failed(err, backoff);
      }
      await this.pause(backoff);
      backoff = retryDelay(++failures, this.random);
    }
  }

  /** Waits `ms`, or less when close() or a call that reached the cloud (onCloudReachable) wakes it. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.offReachable?.();
    this.stream?.cancel();
    this.wake?.();
    await this.following?.catch(() => undefined);
    await this.accepting.catch(() => undefined);
  }
}
