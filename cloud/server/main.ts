#!/usr/bin/env node
// platform-cloud: the cloud service and its admin commands.
import './threadpool.js';
import './private-files.js';
import { extensions } from './extensions.js';
import { buildProgram } from './program.js';

await buildProgram(extensions).parseAsync(process.argv);
