import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  createLabelSpec,
  createMilestone,
  createProjectLabel,
  deleteLabelSpec,
  deleteMilestone,
  deleteProjectLabel,
  getLabelSpec,
  getMilestone,
  getProjectLabel,
  type MilestoneData,
  queryLabelSpecs,
  updateLabelSpec,
  updateMilestone,
} from '../../domain/projects/index.js';
import type { Context } from '../../domain/context.js';
import { LabelSpecSchema, MilestoneSchema, ProjectLabelSchema, toWireLabelSpec, toWireMilestone, toWireProjectLabel } from '../../wire/access.js';
import { crudRoutes, nameQuery } from '../crud.js';
import { InputDate, inputDate, Nullable } from '../schemas/common.js';

const LabelSpecBody = Type.Partial(Type.Object({ name: Type.String(), color: Type.String() }), { additionalProperties: false });
const MilestoneBody = Type.Partial(
  Type.Object({
    projectId: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    startDate: Nullable(InputDate),
    dueDate: Nullable(InputDate),
    closed: Type.Boolean(),
  }),
  { additionalProperties: false },
);

type MilestoneBodyType = typeof MilestoneBody.static;

function milestoneData(body: MilestoneBodyType): MilestoneData {
  return { ...body, startDate: inputDate(body.startDate, 'startDate'), dueDate: inputDate(body.dueDate, 'dueDate') };
}

/** Label specs and milestones (docs/compatibility.md#projects-milestones, docs/compatibility.md#projects-labels) and project labels. */
export const labelMilestoneRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(
    crudRoutes([
      {
        tag: 'Label Spec',
        collection: '/label-specs',
        idParam: 'labelSpecId',
        schema: LabelSpecSchema,
        toWire: toWireLabelSpec,
        get: getLabelSpec,
        create: { body: LabelSpecBody, run: createLabelSpec },
        update: { body: LabelSpecBody, run: updateLabelSpec },
        delete: deleteLabelSpec,
        query: nameQuery(queryLabelSpecs),
      },
      {
        tag: 'Milestone',
        collection: '/milestones',
        idParam: 'milestoneId',
        schema: MilestoneSchema,
        toWire: toWireMilestone,
        get: getMilestone,
        create: { body: MilestoneBody, run: (ctx: Context, body) => createMilestone(ctx, milestoneData(body as MilestoneBodyType)) },
        update: { body: MilestoneBody, run: (ctx: Context, id, body) => updateMilestone(ctx, id, milestoneData(body as MilestoneBodyType)) },
        delete: deleteMilestone,
      },
      {
        tag: 'Project Label',
        collection: '/project-labels',
        idParam: 'projectLabelId',
        schema: ProjectLabelSchema,
        toWire: toWireProjectLabel,
        get: getProjectLabel,
        create: { body: Type.Object({ projectId: Type.Integer(), specId: Type.Integer() }, { additionalProperties: false }), run: createProjectLabel },
        delete: deleteProjectLabel,
      },
    ]),
  );
};
