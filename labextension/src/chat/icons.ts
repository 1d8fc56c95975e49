/** Icons of the chat. */

import { LabIcon } from '@jupyterlab/ui-components';

// `jp-icon3` takes its fill from the theme, so the icon follows light and dark themes.
const CHAT_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9.2L4.6 21.6A1 1 0 0 1 3 20.8V18.1A2 2 0 0 1 2 16.4V5a2 2 0 0 1 2-2zm0 2v11.4h1v3l3.6-3H20V5z"/>
    <path d="M12 6.6l1 2.5 2.5 1-2.5 1-1 2.5-1-2.5-2.5-1 2.5-1z"/>
  </g>
</svg>`;

/** The chat sidebar's icon: a speech bubble with a spark. */
export const chatIcon = new LabIcon({
  name: 'chapyter-ext:chat',
  svgstr: CHAT_SVG
});
