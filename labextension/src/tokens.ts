/** Ids, names and shapes shared by the chapyter-ext plugins. */

/** The npm package and URL namespace. */
export const PACKAGE = 'chapyter-ext';

/** Cell metadata key holding the provenance and the links between cells. */
export const METADATA_KEY = 'chapyter';

/** Version of the provenance schema this frontend writes. */
export const SCHEMA_VERSION = 1;

/** Execute-request metadata key by which the kernel knows this frontend runs the code. */
export const FRONTEND_MARKER = 'chapyter_frontend';

/** MIME type of the live progress the kernel shows while the model answers. */
export const PROGRESS_MIME = 'application/vnd.chapyter-ext.progress+json';

/** Plugin ids. */
export namespace PluginIDs {
  /** The notebook cell executor that runs prompt cells and their generated cells. */
  export const executor = 'chapyter-ext:executor';
  /** Settings, commands and decorations for prompt and generated cells. */
  export const notebook = 'chapyter-ext:notebook';
}

/** Command ids. */
export namespace CommandIDs {
  /** Ask the model again for the active prompt cell. */
  export const regenerate = 'chapyter-ext:regenerate';
  /** Select the cell linked to the active one (prompt <-> generated). */
  export const goToLinked = 'chapyter-ext:go-to-linked';
}

/** Provenance of a generated cell, under `metadata.chapyter`. */
export interface IGeneratedMetadata {
  /** Provenance schema version. */
  schema: number;
  /** Always "generated". */
  role: 'generated';
  /** What made it: "magic" for %%ai, "chat" for the sidebar. */
  source: string;
  /** Id of the prompt cell it was generated from (absent for chat cells). */
  generated_from?: string;
  /** sha256 of the normalised request, to tell whether the prompt changed since. */
  prompt_sha256?: string;
  /** Model that answered. */
  model: string;
  /** Host of the endpoint (never the key or the full URL). */
  endpoint?: string;
  /** Sampling parameters. */
  parameters?: { [key: string]: unknown };
  /** When it was generated (ISO 8601, UTC). */
  created: string;
  /** Characters of kernel context sent. */
  context_chars?: number;
  /** Attempts the model call took. */
  attempts?: number;
  /** sha256 of the code as generated, to tell whether a person edited it. */
  code_sha256: string;
  /** Whether the code was edited by hand after generation. */
  edited: boolean;
  /** Further fields written by newer versions are kept as they are. */
  [key: string]: unknown;
}

/** What a prompt cell records, under `metadata.chapyter`. */
export interface IPromptMetadata {
  /** Provenance schema version. */
  schema: number;
  /** Always "prompt". */
  role: 'prompt';
  /** Id of the cell generated from it. */
  generated_cell: string;
}

/** The `chapyter` entry of the set_next_input payload that `%%ai` sends. */
export interface IGenerationPayload {
  /** Provenance computed by the kernel. */
  metadata: IGeneratedMetadata;
  /** Whether the user wants the code run (false after `--no-run`). */
  run: boolean;
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
