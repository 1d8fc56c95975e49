/**
 * What jsdom lacks for `@lumino/widgets` to load: `@lumino/dragdrop` subclasses `DragEvent`
 * when it is imported. Import this before `@lumino/widgets` in a jsdom spec.
 */

const scope = globalThis as { DragEvent?: unknown };
if (scope.DragEvent === undefined) {
  scope.DragEvent = class DragEvent extends MouseEvent {};
}

export {};
