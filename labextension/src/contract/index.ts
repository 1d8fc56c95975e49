/**
 * The notebook contract, the same as `chapyter_ext/contract/` and tested against the same
 * vectors (`tests/vectors/contract.json`): names, the `%%ai` line, hashes, provenance, links,
 * and the notebook's chat id and stored chat.
 */

export * from './constants';
export * from './hashes';
export * from './links';
export * from './magicLine';
export * from './metadata';
export * from './notebookChat';
