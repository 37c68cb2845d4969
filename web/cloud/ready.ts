// Marks the moment the first view is usable (npm run bench:web measures navigation to this mark): the
// sign-in form when no one is signed in, else the data grid with its first page of thumbnails shown.
export function markInteractive(): void {
  if (performance.getEntriesByName('platform-interactive').length > 0) return;
  performance.mark('platform-interactive');
  document.documentElement.setAttribute('data-ready', '1');
}
