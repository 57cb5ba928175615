/**
 * The door of the personalizations area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export type { NamedQuery, PersonalizationKind } from './common-queries.js';
export {
  createPersonalization,
  deletePersonalization,
  getPersonalization,
  listUserPersonalizations,
  type Personalization,
  updatePersonalization,
} from './personalizations.js';
export { getQueriesAndWatches, setQueriesAndWatches } from './queries-and-watches.js';
export { deleteSavedQuery, listSavedQueries, type SavedQueryKind, saveQuery, watchSavedQuery } from './saved-queries.js';
