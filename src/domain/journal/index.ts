/**
 * The door of the journal area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { JournalWorker } from './journal-worker.js';
export { journaledRefChange, journalLag, journalPush, journalPushIntents, type PushIntent, recoverRefIntents } from './ref-journal.js';
export {
  type AppliedJournalEntry,
  appliedJournalEntriesSince,
  existingJournalIds,
  journaledRefHeads,
  refsWithIntents,
  unprocessedJournalRefs,
} from './journal-reads.js';
