// The project's own ESLint rules, registered as the `platform` plugin in eslint.config.js.
import boundaries from './boundaries.js';
import noCycle from './no-cycle.js';
import noFolderCycle from './no-folder-cycle.js';

export default { meta: { name: 'platform' }, rules: { boundaries, 'no-cycle': noCycle, 'no-folder-cycle': noFolderCycle } };
