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
import {
  type ApiApp,
  childList,
  childListRoutes,
  basicInfoQueryRoute,
  itemActionRoutes,
  jsonAction,
  textAction,
  itemDeleteRoute,
  itemGetRoute,
} from '../resource-routes.js';
import { CreatedId, Nullable } from '../schemas/common.js';

const tags = ['Issue'];
const IssueParent = { path: '/issues', idParam: 'issueId', tags };
const FieldValues = Type.Record(Type.String(), Nullable(Type.Union([Type.String(), Type.Array(Type.String())])));
const StateTransition = Type.Object(
  {
    state: Type.String(),
    fields: Type.Optional(FieldValues),
    removeFields: Type.Optional(Type.Array(Type.String())),
    comment: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);
const wire = (row: Parameters<typeof toWireIssue>[0]) => toWireIssue(row, stateOrdinal(row.state));

/** Get, query and create (docs/compatibility.md#issues). */
function issueEntityRoutes(app: ApiApp): void {
  itemGetRoute(app, IssueParent, 'Get Basic Info', IssueSchema, getIssue, wire);

  basicInfoQueryRoute(app, '/issues', tags, IssueSchema, queryIssues, wire);

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
}

/** The issue's lists: fields, changes, comments, votes, watches, milestones, commits and pull requests (docs/compatibility.md#issues). */
function issueListRoutes(app: ApiApp): void {
  childListRoutes(app, IssueParent, [
    childList('fields', 'Get Fields', IssueFieldSchema, listIssueFields, toWireIssueField),
    childList('changes', 'Get Changes', IssueChangeSchema, listIssueChanges, toWireIssueChange),
    childList('comments', 'Get Comments', IssueCommentSchema, listIssueComments, toWireIssueComment),
    childList('votes', 'Get Votes', IssueVoteSchema, listIssueVotes, toWireIssueVote),
    childList('watches', 'Get Watches', IssueWatchSchema, listIssueWatches, toWireIssueWatch),
    childList('milestones', 'Get Milestones', MilestoneSchema, listIssueMilestones, toWireMilestone),
    childList('commits', 'Get Commits', IssueCommitSchema, listIssueCommits),
    childList('pulls', 'Get Pull Requests', PullRequestSchema, listIssuePullRequests, toWirePullRequest),
  ]);
}

/** The setters: title, description, confidentiality, milestones, fields, state transition; and delete (docs/compatibility.md#issues). */
function issueChangeRoutes(app: ApiApp): void {
  itemActionRoutes(app, IssueParent, [
    textAction('title', 'Set Title', setIssueTitle),
    textAction('description', 'Set Description', setIssueDescription),
    jsonAction('confidential', 'Set Confidential', Type.Boolean(), setIssueConfidential),
    jsonAction('milestones', 'Set Milestones', Type.Array(Type.Integer()), setIssueMilestones),
    jsonAction('fields', 'Set Fields', FieldValues, setIssueFields),
    jsonAction('state-transitions', 'Transit State', StateTransition, transitIssueState),
  ]);
  itemDeleteRoute(app, IssueParent, deleteIssue);
}

/** `/~api/issues` (docs/compatibility.md#gitloom-differs-additions-to-the-interface, docs/compatibility.md#issues). */
export const issueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  issueEntityRoutes(app);
  issueListRoutes(app);
  issueChangeRoutes(app);
};
