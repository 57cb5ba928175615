import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createPersonalization,
  deletePersonalization,
  getPersonalization,
  type Personalization,
  type PersonalizationKind,
  updatePersonalization,
} from '../../domain/personalizations/index.js';
import {
  PlainPersonalizationSchema,
  SubscribedPersonalizationSchema,
  toWirePersonalization,
  WatchedPersonalizationSchema,
} from '../../wire/personalizations.js';
import { crudRoutes, type CrudResource } from '../crud.js';

const QueryInput = Type.Object({ name: Type.String(), query: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { additionalProperties: false });

/** The five personalization resources (docs/compatibility.md#query-personalizations). */
const KINDS: { kind: PersonalizationKind; tag: string; collection: string; extra: 'queryWatches' | 'querySubscriptions' | null }[] = [
  { kind: 'issue', tag: 'Issue Query Personalization', collection: '/issue-query-personalizations', extra: 'queryWatches' },
  { kind: 'pullRequest', tag: 'Pull Request Query Personalization', collection: '/pull-request-query-personalizations', extra: 'queryWatches' },
  { kind: 'build', tag: 'Build Query Personalization', collection: '/build-query-personalizations', extra: 'querySubscriptions' },
  { kind: 'commit', tag: 'Commit Query Personalization', collection: '/commit-query-personalizations', extra: 'querySubscriptions' },
  { kind: 'codeComment', tag: 'Code Comment Query Personalization', collection: '/code-comment-query-personalizations', extra: null },
];

function resource(entry: (typeof KINDS)[number]): CrudResource<Personalization, TObject, TObject> {
  const extra: Record<string, TSchema> =
    entry.extra === 'queryWatches'
      ? { queryWatches: Type.Record(Type.String(), Type.Boolean()) }
      : entry.extra === 'querySubscriptions'
        ? { querySubscriptions: Type.Array(Type.String()) }
        : {};
  const fields = { projectId: Type.Integer(), userId: Type.Integer(), queries: Type.Array(QueryInput), ...extra };
  const schema =
    entry.extra === 'queryWatches'
      ? WatchedPersonalizationSchema
      : entry.extra === 'querySubscriptions'
        ? SubscribedPersonalizationSchema
        : PlainPersonalizationSchema;
  return {
    tag: entry.tag,
    collection: entry.collection,
    idParam: 'queryPersonalizationId',
    schema,
    toWire: toWirePersonalization,
    get: (ctx, id) => getPersonalization(ctx, entry.kind, id),
    create: {
      body: Type.Object({ ...Type.Partial(Type.Object(fields)).properties, projectId: fields.projectId }, { additionalProperties: false }),
      run: (ctx, body) => createPersonalization(ctx, entry.kind, body),
    },
    update: {
      body: Type.Partial(Type.Object(fields, { additionalProperties: false })),
      run: (ctx, id, body) => updatePersonalization(ctx, entry.kind, id, body),
    },
    delete: (ctx, id) => deletePersonalization(ctx, entry.kind, id),
  };
}

/** `/~api/{issue,pull-request,build,commit,code-comment}-query-personalizations` (docs/compatibility.md#query-personalizations). */
export const personalizationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(crudRoutes(KINDS.map(resource)));
};
