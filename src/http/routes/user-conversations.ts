import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listUserIssueVotes, listUserIssueWatches } from '../../domain/issues/index.js';
import { getQueriesAndWatches, listUserPersonalizations, type PersonalizationKind, setQueriesAndWatches } from '../../domain/personalizations/index.js';
import { IssueVoteSchema, IssueWatchSchema, toWireIssueVote, toWireIssueWatch } from '../../wire/issues.js';
import {
  PlainPersonalizationSchema,
  QueriesAndWatchesSchema,
  SubscribedPersonalizationSchema,
  toWirePersonalization,
  WatchedPersonalizationSchema,
} from '../../wire/personalizations.js';
import { childList, childListRoutes } from '../resource-routes.js';

const UserId = Type.Object({ userId: Type.Integer() });
const tags = ['User'];
const QueryList = Type.Array(
  Type.Object({ name: Type.String(), query: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { additionalProperties: false }),
);

const PERSONALIZATION_LISTS: {
  path: string;
  kind: PersonalizationKind;
  summary: string;
  schema: typeof WatchedPersonalizationSchema | typeof SubscribedPersonalizationSchema | typeof PlainPersonalizationSchema;
}[] = [
  { path: 'build', kind: 'build', summary: 'Get Project Build Query Personalizations', schema: SubscribedPersonalizationSchema },
  { path: 'code-comment', kind: 'codeComment', summary: 'Get Project Code Comment Query Personalizations', schema: PlainPersonalizationSchema },
  { path: 'commit', kind: 'commit', summary: 'Get Project Commit Query Personalizations', schema: SubscribedPersonalizationSchema },
  { path: 'issue', kind: 'issue', summary: 'Get Project Issue Query Personalizations', schema: WatchedPersonalizationSchema },
  { path: 'pull-request', kind: 'pullRequest', summary: 'Get Project Pull Request Query Personalizations', schema: WatchedPersonalizationSchema },
];

/** The conversation parts of `/~api/users/{userId}` (docs/compatibility.md#users-endpoints). */
export const userConversationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  childListRoutes(app, { path: '/users', idParam: 'userId', tags }, [
    childList('issue-votes', 'Get Issue Votes', IssueVoteSchema, listUserIssueVotes, toWireIssueVote),
    childList('issue-watches', 'Get Issue Watches', IssueWatchSchema, listUserIssueWatches, toWireIssueWatch),
    ...PERSONALIZATION_LISTS.map((list) =>
      childList(
        `project-${list.path}-query-personalizations`,
        list.summary,
        list.schema,
        (ctx, userId) => listUserPersonalizations(ctx, list.kind, userId),
        toWirePersonalization,
      ),
    ),
  ]);

  app.get(
    '/users/:userId/queries-and-watches',
    { schema: { tags, summary: 'Get Queries And Watches', params: UserId, response: { 200: QueriesAndWatchesSchema } } },
    async (request) => getQueriesAndWatches(request.ctx, request.params.userId),
  );
  app.post(
    '/users/:userId/queries-and-watches',
    {
      schema: {
        tags,
        summary: 'Set Queries And Watches',
        params: UserId,
        body: Type.Object(
          {
            projectQueries: Type.Optional(QueryList),
            issueQueries: Type.Optional(QueryList),
            issueQueryWatches: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
            pullRequestQueries: Type.Optional(QueryList),
            pullRequestQueryWatches: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
            buildQueries: Type.Optional(QueryList),
            buildQuerySubscriptions: Type.Optional(Type.Array(Type.String())),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const body = request.body;
      const queries = (list: typeof body.issueQueries) => list?.map((q) => ({ name: q.name, query: q.query ?? null }));
      await setQueriesAndWatches(request.ctx, request.params.userId, {
        ...body,
        projectQueries: queries(body.projectQueries),
        issueQueries: queries(body.issueQueries),
        pullRequestQueries: queries(body.pullRequestQueries),
        buildQueries: queries(body.buildQueries),
      });
      return '';
    },
  );
};
