import { Type } from '@sinclair/typebox';
import { Nullable } from './schema.js';

/** A saved query `{name, query}` (docs/compatibility.md#query-personalizations). */
export const NamedQuerySchema = Type.Object({ name: Type.String(), query: Nullable(Type.String()) });

const base = { id: Type.Integer(), projectId: Type.Integer(), userId: Type.Integer(), queries: Type.Array(NamedQuerySchema) };

/** Issue and pull request query personalizations: with `queryWatches`. */
export const WatchedPersonalizationSchema = Type.Object({ ...base, queryWatches: Type.Record(Type.String(), Type.Boolean()) });
/** Build and commit query personalizations: with `querySubscriptions`. */
export const SubscribedPersonalizationSchema = Type.Object({ ...base, querySubscriptions: Type.Array(Type.String()) });
/** Code comment query personalizations: queries only. */
export const PlainPersonalizationSchema = Type.Object(base);

/** Maps a personalization to its wire shape (fields in OneDev's order). */
export function toWirePersonalization(p: {
  id: number;
  projectId: number;
  userId: number;
  queries: { name: string; query: string | null }[];
  queryWatches?: Record<string, boolean>;
  querySubscriptions?: string[];
}) {
  return {
    id: p.id,
    projectId: p.projectId,
    userId: p.userId,
    queries: p.queries,
    ...(p.queryWatches !== undefined ? { queryWatches: p.queryWatches } : {}),
    ...(p.querySubscriptions !== undefined ? { querySubscriptions: p.querySubscriptions } : {}),
  };
}

/** QueriesAndWatches JSON (docs/compatibility.md#users-endpoints), fields in OneDev's order. */
export const QueriesAndWatchesSchema = Type.Object({
  projectQueries: Type.Array(NamedQuerySchema),
  issueQueries: Type.Array(NamedQuerySchema),
  issueQueryWatches: Type.Record(Type.String(), Type.Boolean()),
  pullRequestQueries: Type.Array(NamedQuerySchema),
  pullRequestQueryWatches: Type.Record(Type.String(), Type.Boolean()),
  buildQueries: Type.Array(NamedQuerySchema),
  buildQuerySubscriptions: Type.Array(Type.String()),
});
