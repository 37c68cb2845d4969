// The config's packages as platform-server composes them (core/server/compose.ts): installed before the
// resources that use them are built, pruned after, and checked again while the config stays the same.
import type { Machine } from '../kernel/machine.js';
import { checkMaintenance } from '../kernel/maintenance-check.js';
import type { Maintenance } from '../config/machine-config.js';
import type { MachinePackages } from '../packages/machine-packages.js';
import type { DriverLogger } from '../../plugins/driver.js';
import { envNumber } from '../serving/env.js';
import type { ConfigReloader } from './config-reloader.js';

/** How often packages that could not be downloaded (the cloud unreachable) are tried again. */
const PACKAGES_RETRY_MS = envNumber('PLATFORM_PACKAGES_RETRY_MS', 10_000, 100)!;
/** How often a config with a package at "latest" asks the cloud for a newer version (at least 1 s: each check is a call per package). */
const PACKAGES_LATEST_MS = envNumber('PLATFORM_PACKAGES_LATEST_MS', 60_000, 1000)!;

export class PackageChecks {
  private timer?: NodeJS.Timeout;
  /** Why the maintenance window holds back the package checks, while it does (logged when it changes). */
  private deferred?: string;

  constructor(
    readonly packages: MachinePackages,
    private readonly machine: Machine,
    private readonly reloader: ConfigReloader,
    private readonly log: DriverLogger,
  ) {}

  /**
   * Installs the running config's packages again while the config stays the same: a package the cloud
   * could not be asked for (an online machine that started offline, a cloud that was down) is retried
   * after PACKAGES_RETRY_MS, and a config that follows "latest" asks the cloud for a newer version every
   * PACKAGES_LATEST_MS (a model trained again). One timer serves both: the sooner is due. A changed folder
   * rebuilds the resources that use it, in the order of a config change (install, reconfigure, prune), so
   * the running version keeps running until the new one is ready; a check that cannot reach the cloud
   * keeps what is installed. Runs in the reload queue, so it never interleaves with a reconfiguration,
   * and waits for the maintenance window as a config change does.
   */
  schedule(): void {
    clearTimeout(this.timer);
    const delay = this.packages.nextCheckMs({ retryMs: PACKAGES_RETRY_MS, latestMs: PACKAGES_LATEST_MS });
    if (delay === undefined || this.reloader.stopping) return;
    this.timer = setTimeout(() => {
      this.reloader.enqueue(() =>
        this.check()
          .catch((err) => this.log.error('package check failed', { error: String(err) }))
          // A failed check does not end the checks: the next one is scheduled from the config running now.
          .finally(() => this.schedule()),
      );
    }, delay);
    this.timer.unref();
  }

  /** Stops the checks (shutdown); close() then ends the package sources. */
  stop(): void {
    clearTimeout(this.timer);
  }

  close(): void {
    this.packages.close();
  }

  private async check(): Promise<void> {
    const config = this.reloader.loaded?.config;
    if (!config || this.reloader.stopping) return;
    if (config.maintenance && !(await this.allowed(config.maintenance))) return;
    if (await this.packages.install(config)) {
      await this.machine.refresh();
      await this.packages.prune();
    }
  }

  /**
   * A new package version rebuilds resources, so the maintenance window gates it as it gates a config
   * change: while the sensor says no, nothing is downloaded or rebuilt and the next check asks again.
   * The wait is logged when it begins or its reason changes; each deferred check only at debug level.
   */
  private async allowed(maintenance: Maintenance): Promise<boolean> {
    const verdict = await checkMaintenance(this.machine, maintenance);
    if (verdict.allowed) {
      this.deferred = undefined;
      return true;
    }
    if (this.deferred !== verdict.reason) this.log.info('package check deferred by the maintenance window', { reason: verdict.reason });
    else this.log.debug('package check deferred by the maintenance window', { reason: verdict.reason });
    this.deferred = verdict.reason;
    return false;
  }
}
