/** Ids, names and shapes shared by the chapyter-ext plugins. */

/** The npm package and URL namespace. */
export const PACKAGE = 'chapyter-ext';

// The notebook contract's names and shapes live in ./contract; re-exported for the plugins.
export {
  FRONTEND_MARKER,
  METADATA_KEY,
  PROGRESS_MIME,
  SCHEMA_VERSION
} from './contract/constants';
export type {
  IGeneratedMetadata,
  IGenerationPayload,
  IPromptMetadata
} from './contract/metadata';

/** Plugin ids. */
export namespace PluginIDs {
  /** The notebook cell executor that runs prompt cells and their generated cells. */
  export const executor = 'chapyter-ext:executor';
  /** Settings, commands and decorations for prompt and generated cells. */
  export const notebook = 'chapyter-ext:notebook';
  /** The render gate for outputs of cells the model wrote, and untrusted outputs. */
  export const outputGate = 'chapyter-ext:output-gate';
}

/** Command ids. */
export namespace CommandIDs {
  /** Ask the model again for the active prompt cell. */
  export const regenerate = 'chapyter-ext:regenerate';
  /** Select the cell linked to the active one (prompt <-> generated). */
  export const goToLinked = 'chapyter-ext:go-to-linked';
}

/** User settings of the notebook integration (schema/notebook.json). */
export interface INotebookSettings {
  /** Run generated code at once. */
  autoRun: boolean;
  /** Leave generated code unrun and selected, for review. */
  reviewBeforeRunning: boolean;
  /** Collapse the input of generated cells. */
  collapseGeneratedInput: boolean;
  /** Ask before replacing a generated cell that was edited by hand. */
  confirmOverwriteEdited: boolean;
  /** Show the code in the generated cell while the model writes it. */
  streamIntoCell: boolean;
}

/** Defaults of {@link INotebookSettings}, as in the schema. */
export const DEFAULT_NOTEBOOK_SETTINGS: INotebookSettings = {
  autoRun: true,
  reviewBeforeRunning: false,
  collapseGeneratedInput: false,
  confirmOverwriteEdited: true,
  streamIntoCell: true
};
