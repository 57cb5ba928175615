/** Search across the forge (docs/compatibility.md#global-search). */
export { globalSearch, MAX_SEARCH_LENGTH, type GlobalSearchResults } from './global-search.js';
