import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAdmin } from '../../domain/actor.js';
import { getJobExecutors, setJobExecutors } from '../../domain/builds/index.js';
import { getSecuritySetting, setSecuritySetting } from '../../domain/settings/index.js';
import { getAuthenticator, getSsoConnectors, LDAP_AUTHENTICATOR_CLASS, setAuthenticator, setSsoConnectors } from '../../domain/sso/index.js';
import { Nullable } from '../schemas/common.js';

const SecuritySettingSchema = Type.Object(
  {
    enableAnonymousAccess: Type.Boolean(),
    enableSelfRegister: Type.Boolean(),
    enableSelfDeregister: Type.Boolean(),
    defaultLoginGroupId: Nullable(Type.Integer()),
    enforce2FA: Type.Boolean(),
    // Gitloom's own (docs/compatibility.md#gitloom-differs-sessions-and-tokens)
    sessionTimeoutDays: Type.Integer({ minimum: 1, maximum: 3650 }),
    maxTokenLifetimeDays: Nullable(Type.Integer({ minimum: 1, maximum: 36500 })),
  },
  { additionalProperties: false },
);
const tags = ['Setting'];

/** The fields every job executor has (OneDev `JobExecutor`), in OneDev's order. */
const executorBase = {
  enabled: Type.Boolean(),
  name: Type.String(),
  jobRequirement: Nullable(Type.String()),
  shellAccessEnabled: Type.Boolean(),
  sitePublishEnabled: Type.Boolean(),
  cacheTTL: Type.Integer(),
};
const RegistryLoginSchema = Type.Object({ registryUrl: Nullable(Type.String()), userName: Type.String(), password: Type.String() });
const dockerFields = {
  registryLogins: Type.Array(RegistryLoginSchema),
  runOptions: Nullable(Type.String()),
  dockerExecutable: Nullable(Type.String()),
  mountDockerSock: Type.Boolean(),
  dockerSockPath: Nullable(Type.String()),
  networkOptions: Nullable(Type.String()),
  cpuLimit: Nullable(Type.String()),
  memoryLimit: Nullable(Type.String()),
  concurrency: Nullable(Type.String()),
  imageMappings: Type.Array(Type.Unknown()),
};
/** A remote executor's agent selector (docs/compatibility.md#build-agents). */
const agentQuery = Nullable(Type.String());
const concurrency = Nullable(Type.String());
const JobExecutorsSchema = Type.Array(
  Type.Union([
    Type.Object({ '@type': Type.Literal('ServerDockerExecutor'), ...executorBase, ...dockerFields }),
    Type.Object({ '@type': Type.Literal('ServerShellExecutor'), ...executorBase, concurrency }),
    Type.Object({ '@type': Type.Literal('RemoteDockerExecutor'), ...executorBase, agentQuery, ...dockerFields }),
    Type.Object({ '@type': Type.Literal('RemoteShellExecutor'), ...executorBase, agentQuery, concurrency }),
  ]),
);

const GroupRetrievalSchema = Type.Union([
  Type.Object({ '@type': Type.Literal('DoNotRetrieveGroups') }, { additionalProperties: false }),
  Type.Object(
    { '@type': Type.Literal('SearchGroupsUsingFilter'), groupSearchBase: Type.String(), groupSearchFilter: Type.String(), groupNameAttribute: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object(
    { '@type': Type.Literal('GetGroupsUsingAttribute'), userGroupsAttribute: Type.String(), groupNameAttribute: Type.String() },
    { additionalProperties: false },
  ),
]);
/** OneDev's `LdapAuthenticator` and Gitloom's two fields (docs/security.md#ldap-authenticator); no manager password. */
const authenticatorFields = {
  '@class': Type.Literal(LDAP_AUTHENTICATOR_CLASS),
  timeout: Type.Integer({ description: 'seconds' }),
  defaultGroup: Nullable(Type.String()),
  ldapUrl: Type.String(),
  authenticationRequired: Type.Boolean(),
  managerDN: Nullable(Type.String()),
  userSearchBase: Nullable(Type.String()),
  userSearchFilter: Nullable(Type.String()),
  userFullNameAttribute: Nullable(Type.String()),
  userEmailAttribute: Nullable(Type.String()),
  userSshKeyAttribute: Type.Null(),
  groupRetrieval: GroupRetrievalSchema,
  userDNPattern: Nullable(Type.String({ description: 'Gitloom: bind as this DN, {0} the login name, instead of searching' })),
  accountPolicy: Type.Union([Type.Literal('CREATE_ACCOUNT'), Type.Literal('LINK_BY_EMAIL')], {
    description: 'Gitloom: what an unknown directory user becomes',
  }),
};
const AuthenticatorSchema = Type.Object(authenticatorFields);
const { '@class': authenticatorClass, userSshKeyAttribute: _sshKeys, ...optionalAuthenticatorFields } = authenticatorFields;
const AuthenticatorBodySchema = Type.Union([
  Type.Object(
    {
      '@class': Type.String(),
      ...Type.Partial(Type.Object(optionalAuthenticatorFields)).properties,
      userSshKeyAttribute: Type.Optional(Nullable(Type.String())),
      managerPassword: Type.Optional(Nullable(Type.String({ description: 'write-only: never answered; omitted keeps the stored one' }))),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

/** OneDev's `OpenIdConnector` and Gitloom's claim names and account policy (docs/security.md#openid-connect); no client secret. */
const ssoConnectorFields = {
  '@type': Type.Literal('OpenIdConnector'),
  name: Type.String(),
  defaultGroup: Nullable(Type.String()),
  configurationDiscoveryUrl: Type.String(),
  clientId: Type.String(),
  groupsClaim: Nullable(Type.String()),
  buttonImageUrl: Nullable(Type.String()),
  userNameClaim: Type.String({ description: 'Gitloom: the claim of the login name (default preferred_username)' }),
  fullNameClaim: Type.String({ description: 'Gitloom: the claim of the full name (default name)' }),
  emailClaim: Type.String({ description: 'Gitloom: the claim of the email (default email)' }),
  accountPolicy: authenticatorFields.accountPolicy,
};
const { '@type': _connectorType, ...optionalConnectorFields } = ssoConnectorFields;
const SsoConnectorsBodySchema = Type.Array(
  Type.Object(
    {
      '@type': Type.String(),
      ...Type.Partial(Type.Object(optionalConnectorFields)).properties,
      clientSecret: Type.Optional(Nullable(Type.String({ description: 'write-only: never answered; omitted keeps the stored one of the same name' }))),
    },
    { additionalProperties: false },
  ),
);

/**
 * `/~api/settings/authenticator`: the LDAP authenticator (administrators; docs/security.md#ldap-authenticator);
 * `/~api/settings/sso-connectors`: the OpenID Connect connectors (administrators; docs/security.md#openid-connect);
 * `/~api/settings/security`: the security setting (administrators; docs/compatibility.md#platform-first-boot);
 * `/~api/settings/job-executors`: the job executors (administrators; docs/compatibility.md#builds-job-executors).
 */
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

  app.get(
    '/settings/authenticator',
    { schema: { tags, summary: 'Get Authenticator', response: { 200: AuthenticatorSchema, 204: Type.Null() } } },
    async (request, reply) => (await getAuthenticator(request.ctx)) ?? reply.code(204).send(null),
  );

  app.post(
    '/settings/authenticator',
    {
      schema: {
        tags,
        summary: 'Set Authenticator',
        description: `Sets the LDAP authenticator (\`"@class": "${authenticatorClass.const}"\`; absent fields take their defaults), or removes it with \`null\`. The manager password is write-only: an update without it keeps the stored one.`,
        body: AuthenticatorBodySchema,
      },
    },
    async (request) => {
      await setAuthenticator(request.ctx, request.body);
      return '';
    },
  );

  app.get(
    '/settings/sso-connectors',
    { schema: { tags, summary: 'Get SSO Connectors', response: { 200: Type.Array(Type.Object(ssoConnectorFields)) } } },
    async (request) => getSsoConnectors(request.ctx),
  );

  app.post(
    '/settings/sso-connectors',
    {
      schema: {
        tags,
        summary: 'Set SSO Connectors',
        description:
          'Replaces the SSO connectors with the list given (`"@type": "OpenIdConnector"`; absent fields take their defaults). The client secret is write-only: a connector without it keeps the stored secret of the connector of the same name.',
        body: SsoConnectorsBodySchema,
      },
    },
    async (request) => {
      await setSsoConnectors(request.ctx, request.body);
      return '';
    },
  );

  app.get('/settings/job-executors', { schema: { tags, summary: 'Get Job Executors', response: { 200: JobExecutorsSchema } } }, async (request) =>
    getJobExecutors(request.ctx),
  );

  app.post(
    '/settings/job-executors',
    {
      schema: {
        tags,
        summary: 'Set Job Executors',
        description:
          'Replaces the job executors with the list given: ServerDockerExecutor, ServerShellExecutor, RemoteDockerExecutor and RemoteShellExecutor objects as GET answers them; absent fields take their defaults. Settings Gitloom does not act on must keep their defaults (docs/compatibility.md#builds-job-executors).',
        // checked by the domain (one check for the API and the page), which names the field refused
        body: Type.Array(Type.Unknown(), { description: 'JobExecutor[]' }),
      },
    },
    async (request) => {
      await setJobExecutors(request.ctx, request.body);
      return '';
    },
  );
};
