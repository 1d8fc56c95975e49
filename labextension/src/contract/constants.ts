/** Names of the notebook contract, the same in `chapyter_ext/contract/`. */

/** Cell metadata key holding the provenance and the links between cells. */
export const METADATA_KEY = 'chapyter';

/** Version of the provenance schema this frontend writes. */
export const SCHEMA_VERSION = 1;

/** Execute-request metadata key by which the kernel knows this frontend runs the code. */
export const FRONTEND_MARKER = 'chapyter_frontend';

/** Execute-request metadata key asking `%%ai` to correct generated code that raised. */
export const RETRY_MARKER = 'chapyter_retry';

/** MIME type of the live progress the kernel shows while the model answers. */
export const PROGRESS_MIME = 'application/vnd.chapyter-ext.progress+json';

/** `check` value of a generated cell whose code failed the syntax check when generated. */
export const CHECK_SYNTAX_ERROR = 'syntax-error';
