/**
 * `/~administration/authenticator` (the LDAP authenticator of `/~api/settings/authenticator`) and
 * `/~administration/sso-connectors` (the OpenID Connect connectors of
 * `/~api/settings/sso-connectors`), docs/security.md#single-sign-on. Secrets are write-only
 * here too: their fields start empty and an empty field keeps the stored secret.
 */
import { queryGroups } from '../../../domain/access/index.js';
import {
  type AuthenticatorInput,
  getAuthenticator,
  getSsoConnectors,
  LDAP_AUTHENTICATOR_CLASS,
  type OpenIdConnector,
  setAuthenticator,
  setSsoConnectors,
  ssoCallbackPath,
  type SsoConnectorInput,
} from '../../../domain/sso/index.js';
import { BadRequest } from '../../../errors.js';
import { Checkbox, Select } from '../../components/controls.js';
import { Notice } from '../../components/flash.js';
import { Field, InlineForm, PostForm } from '../../components/forms.js';
import { checked, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

/** Most groups offered as default group (the API's page size). */
const LIMIT = 100;

const POLICIES = [
  { value: 'CREATE_ACCOUNT', label: 'Create an account on the first sign-in' },
  { value: 'LINK_BY_EMAIL', label: 'Link to the existing user with the same verified email' },
];
const RETRIEVALS = [
  { value: 'DoNotRetrieveGroups', label: 'Do not retrieve groups (manage memberships here)' },
  { value: 'SearchGroupsUsingFilter', label: 'Search groups with a filter' },
  { value: 'GetGroupsUsingAttribute', label: 'Read the groups from an attribute of the user' },
];

const orNull = (value: string | undefined): string | null => (value === undefined || value.trim() === '' ? null : value.trim());

async function groupOptions(page: PageContext) {
  const groups = await queryGroups(page.ctx, undefined, 0, LIMIT);
  return [{ value: '', label: 'None' }, ...groups.map((g) => ({ value: g.name, label: g.name }))];
}

async function authenticatorPage(page: PageContext, notice: string | null = null, error: string | null = null): Promise<PageResult> {
  const [stored, groups] = await Promise.all([getAuthenticator(page.ctx), groupOptions(page)]);
  // a refused form shows what was submitted
  const form: Record<string, string | undefined> = error ? page.form : {};
  const value = (name: keyof NonNullable<typeof stored> & string, fallback = '') =>
    form[name] ?? String((stored?.[name] as string | number | null | undefined) ?? fallback);
  const retrieval = stored?.groupRetrieval;
  const groupField = (name: string, fallback = '') => form[name] ?? String((retrieval as Record<string, unknown> | undefined)?.[name] ?? fallback);
  return (
    <SettingsLayout page={page} area="administration" section="authenticator" title="Authenticator" error={error}>
      <Notice notice={notice} />
      <p>
        {stored
          ? 'Password sign-ins of directory users and of unknown names are checked by this LDAP directory; local users, the administrator always, sign in with their own passwords.'
          : 'No directory is set: every user signs in with a password of this server.'}
      </p>
      <PostForm page={page} action="/~administration/authenticator" class="settings-form" label="LDAP authenticator">
        <input type="hidden" name="op" value="save" />
        <Field name="ldapUrl" label="LDAP URL (ldap://host or ldaps://host)" value={value('ldapUrl')} required autocomplete="off" />
        <Field name="userDNPattern" label="Bind as this DN, {0} the login name (leave empty to search)" value={value('userDNPattern')} autocomplete="off" />
        <Field name="userSearchBase" label="User search base" value={value('userSearchBase')} autocomplete="off" />
        <Field
          name="userSearchFilter"
          label="User search filter, {0} the login name"
          value={value('userSearchFilter', '(&(uid={0})(objectClass=person))')}
          autocomplete="off"
        />
        <Checkbox
          name="authenticationRequired"
          label="Search as a manager"
          checked={error ? checked(page.form, 'authenticationRequired') : (stored?.authenticationRequired ?? false)}
        />
        <Field name="managerDN" label="Manager DN" value={value('managerDN')} autocomplete="off" />
        <Field name="managerPassword" label="Manager password (leave empty to keep)" type="password" autocomplete="new-password" />
        <Field name="userFullNameAttribute" label="Full name attribute" value={value('userFullNameAttribute', 'displayName')} autocomplete="off" />
        <Field name="userEmailAttribute" label="Email attribute" value={value('userEmailAttribute', 'mail')} autocomplete="off" />
        <Select name="groupRetrieval" label="Groups" value={form.groupRetrieval ?? retrieval?.['@type'] ?? 'DoNotRetrieveGroups'} options={RETRIEVALS} />
        <Field name="groupSearchBase" label="Group search base" value={groupField('groupSearchBase')} autocomplete="off" />
        <Field
          name="groupSearchFilter"
          label="Group search filter, {0} the user's DN"
          value={groupField('groupSearchFilter', '(&(member={0})(objectClass=groupOfNames))')}
          autocomplete="off"
        />
        <Field
          name="userGroupsAttribute"
          label="Attribute listing the user's groups"
          value={groupField('userGroupsAttribute', 'memberOf')}
          autocomplete="off"
        />
        <Field name="groupNameAttribute" label="Group name attribute" value={groupField('groupNameAttribute', 'cn')} autocomplete="off" />
        <Select name="defaultGroup" label="Default group of new users (when groups are not retrieved)" value={value('defaultGroup')} options={groups} />
        <Select name="accountPolicy" label="Unknown directory users" value={value('accountPolicy', 'CREATE_ACCOUNT')} options={POLICIES} />
        <Field name="timeout" label="Timeout (seconds)" value={value('timeout', '300')} required autocomplete="off" />
        <p>
          <button type="submit" class="primary">
            Save authenticator
          </button>
        </p>
      </PostForm>
      {stored && (
        <InlineForm
          page={page}
          action="/~administration/authenticator"
          label="Remove authenticator"
          fields={{ op: 'remove' }}
          buttonClass="danger"
          buttonLabel="Remove authenticator"
        >
          Remove authenticator
        </InlineForm>
      )}
    </SettingsLayout>
  );
}

async function saveAuthenticator(page: PageContext): Promise<PageResult> {
  const f = page.form;
  if (f.op === 'remove') {
    await setAuthenticator(page.ctx, null);
    return authenticatorPage(page, 'Authenticator removed.');
  }
  if (f.op !== 'save') throw new BadRequest(`Unknown operation: ${f.op ?? ''}`);
  const timeout = Number(f.timeout);
  const type = f.groupRetrieval ?? 'DoNotRetrieveGroups';
  const groupRetrieval =
    type === 'SearchGroupsUsingFilter'
      ? {
          '@type': type,
          groupSearchBase: f.groupSearchBase ?? '',
          groupSearchFilter: f.groupSearchFilter ?? '',
          groupNameAttribute: f.groupNameAttribute ?? '',
        }
      : type === 'GetGroupsUsingAttribute'
        ? { '@type': type, userGroupsAttribute: f.userGroupsAttribute ?? '', groupNameAttribute: f.groupNameAttribute ?? '' }
        : { '@type': 'DoNotRetrieveGroups' };
  const input: AuthenticatorInput = {
    '@class': LDAP_AUTHENTICATOR_CLASS,
    ldapUrl: f.ldapUrl ?? '',
    userDNPattern: orNull(f.userDNPattern),
    userSearchBase: orNull(f.userSearchBase),
    userSearchFilter: orNull(f.userSearchFilter),
    authenticationRequired: checked(f, 'authenticationRequired'),
    managerDN: orNull(f.managerDN),
    // an empty field keeps the stored password
    ...(orNull(f.managerPassword) !== null && { managerPassword: f.managerPassword }),
    userFullNameAttribute: orNull(f.userFullNameAttribute),
    userEmailAttribute: orNull(f.userEmailAttribute),
    groupRetrieval: groupRetrieval as AuthenticatorInput['groupRetrieval'],
    defaultGroup: orNull(f.defaultGroup),
    accountPolicy: f.accountPolicy as AuthenticatorInput['accountPolicy'],
    timeout: Number.isInteger(timeout) ? timeout : -1,
  };
  await setAuthenticator(page.ctx, input);
  return authenticatorPage(page, 'Authenticator saved.');
}

/** The fields of one connector's form; `idPrefix` keeps the ids of several forms on one page apart. */
function ConnectorFields({
  connector,
  idPrefix: id,
  groups,
}: {
  connector: Partial<OpenIdConnector>;
  idPrefix: string;
  groups: { value: string; label: string }[];
}) {
  const field = (name: keyof OpenIdConnector & string) => ({ name, id: `${id}-${name}`, value: String(connector[name] ?? ''), autocomplete: 'off' });
  return (
    <>
      <Field {...field('name')} label="Name (shown on the button, part of the callback URL)" required />
      <Field {...field('configurationDiscoveryUrl')} label="Discovery URL (https://…/.well-known/openid-configuration)" required />
      <Field {...field('clientId')} label="Client id" required />
      <Field name="clientSecret" id={`${id}-clientSecret`} label="Client secret (leave empty to keep)" type="password" autocomplete="new-password" />
      <Field {...field('groupsClaim')} label="Groups claim (empty: memberships are managed here)" />
      <Field {...field('userNameClaim')} label="Login name claim" />
      <Field {...field('fullNameClaim')} label="Full name claim" />
      <Field {...field('emailClaim')} label="Email claim" />
      <Field {...field('buttonImageUrl')} label="Button image URL (https)" />
      <Select
        name="defaultGroup"
        id={`${id}-defaultGroup`}
        label="Default group of new users (without a groups claim)"
        value={connector.defaultGroup ?? ''}
        options={groups}
      />
      <Select
        name="accountPolicy"
        id={`${id}-accountPolicy`}
        label="Identities met for the first time"
        value={connector.accountPolicy ?? 'CREATE_ACCOUNT'}
        options={POLICIES}
      />
    </>
  );
}

async function connectorsPage(page: PageContext, notice: string | null = null, error: string | null = null): Promise<PageResult> {
  const [connectors, groups] = await Promise.all([getSsoConnectors(page.ctx), groupOptions(page)]);
  const submitted = error ? page.form : null;
  return (
    <SettingsLayout page={page} area="administration" section="sso-connectors" title="Single sign-on" error={error}>
      <Notice notice={notice} />
      {connectors.length === 0 && <p class="empty">No OpenID Connect provider yet.</p>}
      {connectors.map((c, index) => (
        <section key={c.name} aria-labelledby={`connector-${index}`}>
          <h2 id={`connector-${index}`}>{c.name}</h2>
          <p>
            Callback URL to register at the provider: <code>{`${page.ctx.config.serverUrl}${ssoCallbackPath(c.name)}`}</code>
          </p>
          <PostForm page={page} action="/~administration/sso-connectors" class="settings-form" label={`Connector ${c.name}`}>
            <input type="hidden" name="op" value="update" />
            <input type="hidden" name="index" value={String(index)} />
            <ConnectorFields
              idPrefix={`connector-${index}`}
              connector={submitted?.index === String(index) ? (submitted as Partial<OpenIdConnector>) : c}
              groups={groups}
            />
            <p>
              <button type="submit">{`Save ${c.name}`}</button>
            </p>
          </PostForm>
          <InlineForm
            page={page}
            action="/~administration/sso-connectors"
            label={`Delete connector ${c.name}`}
            fields={{ op: 'delete', index: String(index) }}
            buttonClass="danger"
            buttonLabel={`Delete connector ${c.name}`}
          >
            Delete
          </InlineForm>
        </section>
      ))}
      <section aria-labelledby="new-connector-heading">
        <h2 id="new-connector-heading">New OpenID Connect provider</h2>
        <PostForm page={page} action="/~administration/sso-connectors" class="settings-form" label="New OpenID Connect provider">
          <input type="hidden" name="op" value="create" />
          <ConnectorFields idPrefix="new" connector={submitted?.op === 'create' ? (submitted as Partial<OpenIdConnector>) : {}} groups={groups} />
          <p>
            <button type="submit" class="primary">
              Add provider
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

/** A connector as its form submitted it. */
function connectorOf(f: Record<string, string>): SsoConnectorInput {
  return {
    '@type': 'OpenIdConnector',
    name: f.name ?? '',
    configurationDiscoveryUrl: f.configurationDiscoveryUrl ?? '',
    clientId: f.clientId ?? '',
    // an empty field keeps the stored secret
    ...(orNull(f.clientSecret) !== null && { clientSecret: f.clientSecret }),
    groupsClaim: orNull(f.groupsClaim),
    ...(orNull(f.userNameClaim) !== null && { userNameClaim: f.userNameClaim }),
    ...(orNull(f.fullNameClaim) !== null && { fullNameClaim: f.fullNameClaim }),
    ...(orNull(f.emailClaim) !== null && { emailClaim: f.emailClaim }),
    buttonImageUrl: orNull(f.buttonImageUrl),
    defaultGroup: orNull(f.defaultGroup),
    accountPolicy: f.accountPolicy as SsoConnectorInput['accountPolicy'],
  };
}

async function changeConnectors(page: PageContext): Promise<PageResult> {
  const f = page.form;
  const list: SsoConnectorInput[] = await getSsoConnectors(page.ctx);
  const index = Number(f.index);
  if (f.op === 'create') list.push(connectorOf(f));
  else if ((f.op === 'update' || f.op === 'delete') && Number.isInteger(index) && index >= 0 && index < list.length) {
    if (f.op === 'update') list[index] = connectorOf(f);
    else list.splice(index, 1);
  } else throw new BadRequest(`Unknown operation: ${f.op ?? ''}`);
  await setSsoConnectors(page.ctx, list);
  return redirect('/~administration/sso-connectors');
}

export const singleSignOnAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/authenticator', (page) => authenticatorPage(page)),
    settingsPost(
      'administration',
      '/authenticator',
      (page) => saveAuthenticator(page),
      (page, message) => authenticatorPage(page, null, message),
    ),
    settingsRoute('administration', 'GET', '/sso-connectors', (page) => connectorsPage(page)),
    settingsPost(
      'administration',
      '/sso-connectors',
      (page) => changeConnectors(page),
      (page, message) => connectorsPage(page, null, message),
    ),
  ],
};
