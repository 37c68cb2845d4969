#!/usr/bin/env node
// platform-cloud: the cloud service and its admin commands.
import './threadpool.js';
import './private-files.js';
import { createExtensions } from './extensions.js';
import { buildProgram } from './program.js';

await buildProgram(createExtensions()).parseAsync(process.argv);
