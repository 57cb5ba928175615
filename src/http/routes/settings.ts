import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAdmin } from '../../domain/actor.js';
import { getSecuritySetting, setSecuritySetting } from '../../domain/settings/index.js';
import { Nullable } from '../schemas/common.js';

const SecuritySettingSchema = Type.Object(
  {
    enableAnonymousAccess: Type.Boolean(),
    enableSelfRegister: Type.Boolean(),
    enableSelfDeregister: Type.Boolean(),
    defaultLoginGroupId: Nullable(Type.Integer()),
    enforce2FA: Type.Boolean(),
  },
  { additionalProperties: false },
);
const tags = ['Setting'];

/** `/~api/settings/security`: the security setting (administrators; docs/compatibility.md#platform-first-boot). */
export const settingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/settings/security', { schema: { tags, summary: 'Get Security Setting', response: { 200: SecuritySettingSchema } } }, async (request) => {
    requireAdmin(request.actor);
    return getSecuritySetting(request.ctx);
  });

  app.post('/settings/security', { schema: { tags, summary: 'Set Security Setting', body: Type.Partial(SecuritySettingSchema) } }, async (request) => {
    requireAdmin(request.actor);
    await setSecuritySetting(request.ctx, { ...(await getSecuritySetting(request.ctx)), ...request.body });
    return '';
  });
};
