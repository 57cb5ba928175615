import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type ApiApp, itemActionRoutes, textAction } from '../resource-routes.js';
import {
  commitFile,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  getBranch,
  getCommit,
  getRepositoryDefaultBranch,
  getTag,
  listBranchNames,
  listDirectoryAt,
  listTagNames,
  queryCommits,
  readFile,
  setRepositoryDefaultBranch,
} from '../../domain/repositories/index.js';
import {
  CommitSchema,
  DirectoryEntrySchema,
  FileContentSchema,
  FileCreateOrUpdateSchema,
  FileDeleteSchema,
  FileEditResultSchema,
  fromWireFileEdit,
  RefSchema,
  toWireCommit,
  toWireFileContent,
} from '../../wire/repositories.js';

const ProjectId = Type.Object({ projectId: Type.Integer() });
/** A tail that may contain `/` (a branch `feature/x`, `<revision>/<path>`). */
const ProjectIdAndTail = Type.Object({ projectId: Type.Integer(), '*': Type.String() });
const tags = ['Repository'];
const Names = { 200: Type.Array(Type.String()) };
const BranchCreateRequest = Type.Object({ branchName: Type.String(), revision: Type.String() }, { additionalProperties: false });
const TagCreateRequest = Type.Object(
  { tagName: Type.String(), tagMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])), revision: Type.String() },
  { additionalProperties: false },
);
/** Branches and tags: the same list, get and delete operations over their own domain functions. */
const REF_KINDS = [
  { path: 'branches', one: 'Branch', plural: 'Branches', list: listBranchNames, get: getBranch, remove: deleteBranch },
  { path: 'tags', one: 'Tag', plural: 'Tags', list: listTagNames, get: getTag, remove: deleteTag },
] as const;
const CommitsQuery = Type.Object({ query: Type.Optional(Type.String()), count: Type.Optional(Type.Integer({ minimum: 0, default: 100 })) });

/** The default branch, and the branches and tags: list, get, delete, create (docs/compatibility.md#projects-repository-and-default-branch). */
function repositoryRefRoutes(app: ApiApp): void {
  app.get('/repositories/:projectId/default-branch', { schema: { tags, summary: 'Get Default Branch', params: ProjectId } }, async (request, reply) => {
    const branch = await getRepositoryDefaultBranch(request.ctx, request.params.projectId);
    if (branch === null) return reply.code(204).send();
    return reply.type('text/plain; charset=utf-8').send(branch);
  });

  itemActionRoutes(app, { path: '/repositories', idParam: 'projectId', tags }, [
    textAction('default-branch', 'Set Default Branch', (ctx, id, text) => setRepositoryDefaultBranch(ctx, id, text.trim())),
  ]);

  for (const kind of REF_KINDS) {
    app.get(`/repositories/:projectId/${kind.path}`, { schema: { tags, summary: `Get ${kind.plural}`, params: ProjectId, response: Names } }, async (request) =>
      kind.list(request.ctx, request.params.projectId),
    );
    app.get(
      `/repositories/:projectId/${kind.path}/*`,
      { schema: { tags, summary: `Get ${kind.one}`, params: ProjectIdAndTail, response: { 200: RefSchema } } },
      async (request) => kind.get(request.ctx, request.params.projectId, request.params['*']),
    );
    app.delete(
      `/repositories/:projectId/${kind.path}/*`,
      { schema: { tags, summary: `Delete ${kind.one}`, params: ProjectIdAndTail } },
      async (request) => (await kind.remove(request.ctx, request.params.projectId, request.params['*']), ''),
    );
  }
  app.post(
    '/repositories/:projectId/branches',
    { schema: { tags, summary: 'Create Branch', params: ProjectId, body: BranchCreateRequest } },
    async (request) => (await createBranch(request.ctx, request.params.projectId, request.body), ''),
  );
  app.post(
    '/repositories/:projectId/tags',
    { schema: { tags, summary: 'Create Tag', params: ProjectId, body: TagCreateRequest } },
    async (request) => (await createTag(request.ctx, request.params.projectId, request.body), ''),
  );
}

/** Commits (query, get), directories and files (get, edit) (docs/compatibility.md#gitloom-differs-additions-to-the-interface). */
function repositoryContentRoutes(app: ApiApp): void {
  app.get(
    '/repositories/:projectId/commits',
    { schema: { tags, summary: 'Query Commits', params: ProjectId, querystring: CommitsQuery, response: Names } },
    async (request) => queryCommits(request.ctx, request.params.projectId, request.query.query ?? '', request.query.count ?? 100),
  );
  app.get(
    '/repositories/:projectId/commits/:commitHash',
    {
      schema: { tags, summary: 'Get Commit', params: Type.Object({ projectId: Type.Integer(), commitHash: Type.String() }), response: { 200: CommitSchema } },
    },
    async (request) => toWireCommit(await getCommit(request.ctx, request.params.projectId, request.params.commitHash)),
  );

  app.get(
    '/repositories/:projectId/directories/*',
    { schema: { tags, summary: 'Get Directory', params: ProjectIdAndTail, response: { 200: Type.Array(DirectoryEntrySchema) } } },
    async (request) => listDirectoryAt(request.ctx, request.params.projectId, request.params['*']),
  );
  app.get(
    '/repositories/:projectId/files/*',
    { schema: { tags, summary: 'Get File', params: ProjectIdAndTail, response: { 200: FileContentSchema } } },
    async (request) => toWireFileContent(await readFile(request.ctx, request.params.projectId, request.params['*'])),
  );
  app.post(
    '/repositories/:projectId/files/*',
    {
      schema: {
        tags,
        summary: 'Edit File',
        params: ProjectIdAndTail,
        body: Type.Union([FileCreateOrUpdateSchema, FileDeleteSchema]),
        response: { 200: FileEditResultSchema },
      },
    },
    async (request) => commitFile(request.ctx, request.params.projectId, request.params['*'], fromWireFileEdit(request.body)),
  );
}

/**
 * `/repositories/{projectId}/…` (OneDev 8.6 RepositoryResource, docs/compatibility.md#projects-repository-and-default-branch,
 * docs/compatibility.md#gitloom-differs-additions-to-the-interface): default branch, branches, tags, commits, directories and files.
 */
export const repositoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  repositoryRefRoutes(app);
  repositoryContentRoutes(app);
};
