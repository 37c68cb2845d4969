// AVA 7 runs TypeScript through the tsx loader. Tests sit next to the code they test.
export default {
  files: ['core/**/*.test.ts', 'plugins/**/*.test.ts', 'drivers/**/*.test.ts', 'cloud/**/*.test.ts', 'scripts/**/*.test.ts'],
  extensions: { ts: 'module' },
  nodeArguments: ['--import=tsx'],
  // Child processes, not worker threads: the runtime under test creates its own worker threads and servers.
  workerThreads: false,
  concurrency: 2,
  timeout: '300s',
};
