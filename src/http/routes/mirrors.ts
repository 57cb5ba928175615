import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createMirror, deleteMirror, getMirror, listMirrors, syncMirrorNow, updateMirror } from '../../domain/mirrors/index.js';
import { MirrorSchema, toWireMirror } from '../../wire/mirrors.js';
import { CreatedId, Nullable } from '../schemas/common.js';

const tags = ['Repository Mirror'];

const Fields = {
  url: Type.String({ description: 'http(s) URL of the remote repository, without credentials' }),
  userName: Nullable(Type.String()),
  password: Nullable(Type.String({ description: 'password or access token; write-only, stored encrypted' })),
  intervalMinutes: Nullable(Type.Integer({ description: 'pull mirrors: minutes between syncs (10 to 10080, default 60)' })),
  enabled: Type.Boolean(),
};
const Direction = Type.Union([Type.Literal('PULL'), Type.Literal('PUSH')]);
const CreateBody = Type.Object(
  {
    direction: Direction,
    url: Fields.url,
    ...Type.Partial(Type.Object({ userName: Fields.userName, password: Fields.password, intervalMinutes: Fields.intervalMinutes, enabled: Fields.enabled }))
      .properties,
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Partial(Type.Object({ direction: Direction, ...Fields }), { additionalProperties: false });
const ProjectParams = Type.Object({ projectId: Type.Integer() });
const MirrorParams = Type.Object({ projectId: Type.Integer(), mirrorId: Type.Integer() });

/**
 * Repository mirrors of a project (Gitloom addition, docs/compatibility.md#repository-mirrors):
 * list, create, read, update (a partial merge), delete, and "sync now". All need the
 * manage-project privilege; the password is write-only.
 */
export const mirrorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/projects/:projectId/mirrors',
    {
      schema: {
        tags,
        summary: 'Get Repository Mirrors',
        description: "The project's pull mirror (first) and push mirrors, with the outcome of their syncs.",
        params: ProjectParams,
        response: { 200: Type.Array(MirrorSchema) },
      },
    },
    async (request) => (await listMirrors(request.ctx, request.params.projectId)).map(toWireMirror),
  );

  app.post(
    '/projects/:projectId/mirrors',
    {
      schema: {
        tags,
        summary: 'Create Repository Mirror',
        description:
          'Adds a pull mirror (the project must have no branches or tags yet, and has at most one) or a push mirror; it syncs at once. Returns its id.',
        params: ProjectParams,
        body: CreateBody,
        response: { 200: CreatedId },
      },
    },
    async (request) => createMirror(request.ctx, request.params.projectId, request.body),
  );

  app.get(
    '/projects/:projectId/mirrors/:mirrorId',
    { schema: { tags, summary: 'Get Repository Mirror', params: MirrorParams, response: { 200: MirrorSchema } } },
    async (request) => toWireMirror(await getMirror(request.ctx, request.params.projectId, request.params.mirrorId)),
  );

  app.post(
    '/projects/:projectId/mirrors/:mirrorId',
    {
      schema: {
        tags,
        summary: 'Update Repository Mirror',
        description: 'A partial merge: absent fields keep their value, null clears. A URL of another origin drops the stored password unless one is given.',
        params: MirrorParams,
        body: UpdateBody,
      },
    },
    async (request) => {
      await updateMirror(request.ctx, request.params.projectId, request.params.mirrorId, request.body);
      return '';
    },
  );

  app.delete('/projects/:projectId/mirrors/:mirrorId', { schema: { tags, summary: 'Delete Repository Mirror', params: MirrorParams } }, async (request) => {
    await deleteMirror(request.ctx, request.params.projectId, request.params.mirrorId);
    return '';
  });

  app.post(
    '/projects/:projectId/mirrors/:mirrorId/sync',
    {
      schema: {
        tags,
        summary: 'Sync Repository Mirror Now',
        description: 'Makes the mirror due at once, whatever its backoff; the sync runs in the background and its outcome shows in the mirror.',
        params: MirrorParams,
      },
    },
    async (request) => {
      await syncMirrorNow(request.ctx, request.params.projectId, request.params.mirrorId);
      return '';
    },
  );
};
