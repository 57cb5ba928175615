/** Code search (docs/compatibility.md#code-search): the index of each project's default branch (texts and symbols), its worker, code and symbol search, go to definition, and the search of a branch or tag. */
export { CodeIndexWorker, markCodeIndexStale, type CodeIndexWorkerOptions } from './index-worker.js';
export { MAX_TAGS_PER_FILE } from './ctags.js';
export { MAX_INDEXED_BYTES, VENDORED } from './indexer.js';
export { rebuildCodeIndex } from './rebuild.js';
export { refChoices, searchCodeAtRef } from './ref-search.js';
export {
  MAX_LINES_PER_FILE,
  MAX_RESULT_FILES,
  requiredLiterals,
  searchCode,
  type CodeFileMatch,
  type CodeLineMatch,
  type CodeSearchQuery,
  type CodeSearchResults,
} from './search.js';
export {
  findDefinitions,
  MAX_DEFINITIONS,
  MAX_SYMBOL_RESULTS,
  searchSymbols,
  symbolsAvailable,
  type SymbolMatch,
  type SymbolSearchResults,
} from './symbols.js';
