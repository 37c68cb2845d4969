// The data browser's views, in nav order: one line each. The first is shown after sign-in.
import { dataView } from './data/data-view.js';
import { machinesView, mqlView, sqlView, tabularView, trainingView } from './lazy-views.js';
import type { CloudView } from './views.js';

export const views: CloudView[] = [dataView, tabularView, sqlView, mqlView, trainingView, machinesView];
