/**
 * The focus of an opened chat: "Open AI Chat" puts the cursor in the input, wherever it was
 * run from. The command palette gives the focus back to the main area's widget once a command
 * ran (its `restore`), through Lumino's message loop, which runs on animation frames: the
 * input takes it back for a few frames, unless the focus is already inside the panel.
 */

/** Animation frames during which an opened chat takes its input's focus back. */
const FOCUS_FRAMES = 3;

/** Focus `input` now and for the next frames while the focus is outside `panel`. */
export function holdFocus(input: HTMLElement, panel: HTMLElement): void {
  input.focus();
  let frames = FOCUS_FRAMES;
  const again = () => {
    if (!panel.isConnected) {
      return;
    }
    if (!panel.contains(document.activeElement)) {
      input.focus();
    }
    if (--frames > 0) {
      requestAnimationFrame(again);
    }
  };
  requestAnimationFrame(again);
}
