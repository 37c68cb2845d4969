#!/usr/bin/env node
// platform-cloud: the cloud service and its admin commands.
import './threadpool.js';
import { extensions } from './extensions.js';
import { buildProgram } from './program.js';

await buildProgram(extensions).parseAsync(process.argv);
