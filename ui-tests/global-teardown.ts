/** Stops what the run started (harness/servers.ts), specs' own JupyterLabs included. */

import { endRun } from './harness/servers';

export default endRun;
