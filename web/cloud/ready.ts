// Marks the moment the first view is usable (npm run bench:web measures navigation to this mark): the
// sign-in form when no one is signed in, else the data grid with its first page of thumbnails shown.
const waiting: (() => void)[] = [];

export function markInteractive(): void {
  if (performance.getEntriesByName('platform-interactive').length > 0) return;
  performance.mark('platform-interactive');
  document.documentElement.setAttribute('data-ready', '1');
  for (const run of waiting.splice(0)) run();
}

/** Runs `run` once the first view is usable (now, if it is): for work the first view does not need. */
export function whenInteractive(run: () => void): void {
  if (performance.getEntriesByName('platform-interactive').length > 0) run();
  else waiting.push(run);
}
