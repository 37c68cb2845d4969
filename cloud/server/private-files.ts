// Imported first by main.ts: everything platform-cloud creates (the DuckDB file and its WAL, spill files,
// blobs, the token secret) is readable only by the service's user, whatever the shell's umask.
process.umask(0o077);
