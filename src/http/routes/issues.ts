import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listIssuePullRequests } from '../../domain/pulls/index.js';
import {
  deleteIssue,
  getIssue,
  listIssueChanges,
  listIssueComments,
  listIssueCommits,
  listIssueFields,
  listIssueMilestones,
  listIssueVotes,
  listIssueWatches,
  openIssue,
  queryIssues,
  setIssueConfidential,
  setIssueDescription,
  setIssueFields,
  setIssueMilestones,
  setIssueTitle,
  stateOrdinal,
  transitIssueState,
} from '../../domain/issues/index.js';
import { MilestoneSchema, toWireMilestone } from '../../wire/access.js';
import {
  IssueChangeSchema,
  IssueCommentSchema,
  IssueCommitSchema,
  IssueFieldSchema,
  IssueSchema,
  IssueVoteSchema,
  IssueWatchSchema,
  toWireIssue,
  toWireIssueChange,
  toWireIssueComment,
  toWireIssueField,
  toWireIssueVote,
  toWireIssueWatch,
} from '../../wire/issues.js';
import { PullRequestSchema, toWirePullRequest } from '../../wire/pulls.js';
import { textBody } from '../../plugins/bodies.js';
import { CreatedId, Nullable, page, PageQuery, TextBody } from '../schemas/common.js';

const IssueId = Type.Object({ issueId: Type.Integer() });
const tags = ['Issue'];
const FieldValues = Type.Record(Type.String(), Nullable(Type.Union([Type.String(), Type.Array(Type.String())])));

/** `/~api/issues` (docs/compatibility.md#gitloom-differs-additions-to-the-interface, docs/compatibility.md#issues). */
export const issueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const wire = (row: Parameters<typeof toWireIssue>[0]) => toWireIssue(row, stateOrdinal(row.state));

  app.get('/issues/:issueId', { schema: { tags, summary: 'Get Basic Info', params: IssueId, response: { 200: IssueSchema } } }, async (request) =>
    wire(await getIssue(request.ctx, request.params.issueId)),
  );

  app.get(
    '/issues',
    {
      schema: {
        tags,
        summary: 'Query Basic Info',
        querystring: Type.Object({ query: Type.Optional(Type.String()), ...PageQuery }),
        response: { 200: Type.Array(IssueSchema) },
      },
    },
    async (request) => {
      const { offset, count } = page(request.query);
      return (await queryIssues(request.ctx, request.query.query ?? '', offset, count)).map(wire);
    },
  );

  app.post(
    '/issues',
    {
      schema: {
        tags,
        summary: 'Create',
        body: Type.Object(
          {
            projectId: Type.Integer(),
            title: Type.String(),
            description: Type.Optional(Nullable(Type.String())),
            confidential: Type.Optional(Type.Boolean()),
            milestoneIds: Type.Optional(Type.Array(Type.Integer())),
            fields: Type.Optional(FieldValues),
          },
          { additionalProperties: false },
        ),
        response: { 200: CreatedId },
      },
    },
    async (request) => openIssue(request.ctx, request.body),
  );

  app.get(
    '/issues/:issueId/fields',
    { schema: { tags, summary: 'Get Fields', params: IssueId, response: { 200: Type.Array(IssueFieldSchema) } } },
    async (request) => (await listIssueFields(request.ctx, request.params.issueId)).map(toWireIssueField),
  );
  app.get(
    '/issues/:issueId/changes',
    { schema: { tags, summary: 'Get Changes', params: IssueId, response: { 200: Type.Array(IssueChangeSchema) } } },
    async (request) => (await listIssueChanges(request.ctx, request.params.issueId)).map(toWireIssueChange),
  );
  app.get(
    '/issues/:issueId/comments',
    { schema: { tags, summary: 'Get Comments', params: IssueId, response: { 200: Type.Array(IssueCommentSchema) } } },
    async (request) => (await listIssueComments(request.ctx, request.params.issueId)).map(toWireIssueComment),
  );
  app.get(
    '/issues/:issueId/votes',
    { schema: { tags, summary: 'Get Votes', params: IssueId, response: { 200: Type.Array(IssueVoteSchema) } } },
    async (request) => (await listIssueVotes(request.ctx, request.params.issueId)).map(toWireIssueVote),
  );
  app.get(
    '/issues/:issueId/watches',
    { schema: { tags, summary: 'Get Watches', params: IssueId, response: { 200: Type.Array(IssueWatchSchema) } } },
    async (request) => (await listIssueWatches(request.ctx, request.params.issueId)).map(toWireIssueWatch),
  );
  app.get(
    '/issues/:issueId/milestones',
    { schema: { tags, summary: 'Get Milestones', params: IssueId, response: { 200: Type.Array(MilestoneSchema) } } },
    async (request) => (await listIssueMilestones(request.ctx, request.params.issueId)).map(toWireMilestone),
  );
  app.get(
    '/issues/:issueId/commits',
    { schema: { tags, summary: 'Get Commits', params: IssueId, response: { 200: Type.Array(IssueCommitSchema) } } },
    async (request) => listIssueCommits(request.ctx, request.params.issueId),
  );

  app.get(
    '/issues/:issueId/pulls',
    { schema: { tags, summary: 'Get Pull Requests', params: IssueId, response: { 200: Type.Array(PullRequestSchema) } } },
    async (request) => (await listIssuePullRequests(request.ctx, request.params.issueId)).map(toWirePullRequest),
  );

  app.post(
    '/issues/:issueId/title',
    { config: { textBody: true }, schema: { tags, summary: 'Set Title', params: IssueId, body: TextBody } },
    async (request) => {
      await setIssueTitle(request.ctx, request.params.issueId, textBody(request.body));
      return '';
    },
  );
  app.post(
    '/issues/:issueId/description',
    { config: { textBody: true }, schema: { tags, summary: 'Set Description', params: IssueId, body: TextBody } },
    async (request) => {
      await setIssueDescription(request.ctx, request.params.issueId, textBody(request.body));
      return '';
    },
  );
  app.post('/issues/:issueId/confidential', { schema: { tags, summary: 'Set Confidential', params: IssueId, body: Type.Boolean() } }, async (request) => {
    await setIssueConfidential(request.ctx, request.params.issueId, request.body);
    return '';
  });
  app.post(
    '/issues/:issueId/milestones',
    { schema: { tags, summary: 'Set Milestones', params: IssueId, body: Type.Array(Type.Integer()) } },
    async (request) => {
      await setIssueMilestones(request.ctx, request.params.issueId, request.body);
      return '';
    },
  );
  app.post('/issues/:issueId/fields', { schema: { tags, summary: 'Set Fields', params: IssueId, body: FieldValues } }, async (request) => {
    await setIssueFields(request.ctx, request.params.issueId, request.body);
    return '';
  });
  app.post(
    '/issues/:issueId/state-transitions',
    {
      schema: {
        tags,
        summary: 'Transit State',
        params: IssueId,
        body: Type.Object(
          {
            state: Type.String(),
            fields: Type.Optional(FieldValues),
            removeFields: Type.Optional(Type.Array(Type.String())),
            comment: Type.Optional(Nullable(Type.String())),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      await transitIssueState(request.ctx, request.params.issueId, request.body);
      return '';
    },
  );
  app.delete('/issues/:issueId', { schema: { tags, summary: 'Delete', params: IssueId } }, async (request) => {
    await deleteIssue(request.ctx, request.params.issueId);
    return '';
  });
};
