// Imported first by main.ts, before anything can queue work on libuv's thread pool (which is sized once,
// on first use). DuckDB queries, scrypt and file I/O all run on that pool; with Node's default of 4
// threads, four long user queries would leave none for another tenant's page query or an upload's
// writes. User queries are admitted a few at a time (cloud/query/admission.ts); this leaves room
// beside them.
process.env.UV_THREADPOOL_SIZE ??= '16';
