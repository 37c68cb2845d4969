// When an online machine tries the cloud again after losing it (issue 29, item 3; SPEC: a config change
// reaches the machine within 15 s). Two rules:
//   - the wait before each new attempt doubles from RETRY_MIN_MS and never exceeds RETRY_MAX_MS (10 s),
//     so the cloud serving again is found by the next attempt at most 10 s later (the attempt itself
//     fails at once on a refused port, and the channel's own reconnect backoff is capped at 2 s, see
//     core/cloud-link/cloud-link.ts); each wait is jittered down by up to a quarter, so machines that lost the same cloud
//     do not all come back in the same second;
//   - any call of this machine that reached the cloud (a log batch shipped, a status reported, a capture
//     file synced by the data manager in its worker, a package resolved) says so: the link sends
//     cloudReachable() (core/cloud-link/reachable.ts), and a follower that is waiting to try again (the
//     config watch) tries at once instead (onCloudReachable).
export const RETRY_MIN_MS = 1000;
/** PLATFORM_ONLINE_RETRY_MAX_MS shortens it for tests and demos. */
export const RETRY_MAX_MS = Number(process.env.PLATFORM_ONLINE_RETRY_MAX_MS) || 10_000;
/** Each wait is between (1 - RETRY_JITTER) and 1 times its doubling value. */
export const RETRY_JITTER = 0.25;

/** The wait before the next attempt after `failures` failed ones in a row (0: the first retry). */
export function retryDelay(failures: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_MIN_MS * 2 ** Math.min(failures, 30), RETRY_MAX_MS);
  return Math.round(base * (1 - RETRY_JITTER * random()));
}
