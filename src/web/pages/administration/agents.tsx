/**
 * `/~administration/agents` (docs/compatibility.md#build-agents "Tokens and agents"; OneDev's
 * agent pages under Administration): the agents by agent query — online or offline, paused, OS
 * and architecture, CPUs, memory, container engine, running builds —, an agent's page — what it
 * reported, its attributes (edited while it is online), its running and recent builds, pause or
 * resume, removal once its name is typed —, and `/~administration/agents/tokens`: the tokens
 * agents connect with, created (the value shown) and deleted. Through the domain functions of
 * `/~api/agents` and `/~api/agent-tokens`, with their rules and messages.
 */
import {
  agentsOfTokens,
  createAgentToken,
  deleteAgentToken,
  getAgent,
  getAgentAttributes,
  getAgentToken,
  isAgentOnline,
  queryAgents,
  queryAgentTokens,
  removeAgent,
  setAgentPaused,
  updateAgentAttributes,
} from '../../../domain/agents/index.js';
import { buildProjectPaths, buildsRanOnAgent, runningBuildCounts } from '../../../domain/builds/index.js';
import { BadRequest } from '../../../errors.js';
import { Notice } from '../../components/flash.js';
import { Field, InlineForm, PostForm } from '../../components/forms.js';
import { QueryBox } from '../../components/query-box.js';
import { Pager, queryPage } from '../../components/query-list.js';
import { entryChange, formId, idParam, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { formatBytes } from '../../components/sizes.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';
import { BuildTable, DateTime } from '../builds/build-parts.js';

/** An agent as the domain's reads return it. */
type AgentRow = Awaited<ReturnType<typeof getAgent>>;

const BASE = '/~administration/agents';
/** Builds shown of each kind on an agent's page. */
const BUILDS_SHOWN = 20;
/** Most tokens listed (the API's page size). */
const TOKENS_SHOWN = 100;

/** Online or offline, as a word in a badge. */
function OnlineBadge({ agent, now }: { agent: AgentRow; now: number }) {
  const online = isAgentOnline(agent, now);
  return <span class={`badge agent-${online ? 'online' : 'offline'}`}>{online ? 'online' : 'offline'}</span>;
}

async function agentList(page: PageContext): Promise<PageResult> {
  const list = await queryPage(page, '', (query, offset, count) => queryAgents(page.ctx, query, offset, count));
  const running = await runningBuildCounts(
    page.ctx,
    list.rows.map((a) => a.id),
  );
  const now = page.ctx.now();
  return (
    <SettingsLayout page={page} area="administration" section="agents" title="Agents">
      <p>
        Agents run the jobs of the remote executors whose agent selector picks them: <code>gitloom agent --server &lt;url&gt; --token &lt;token&gt;</code> on
        another machine. <a href={`${BASE}/tokens`}>Agent tokens</a>
      </p>
      <QueryBox action={BASE} query={list.query} example={'online and "Os" is "Linux" order by "Name"'} error={list.error} />
      {list.rows.length === 0 ? (
        <p class="empty">{list.query.trim() === '' && list.number === 1 ? 'No agent has connected yet.' : 'No agent found.'}</p>
      ) : (
        <div class="table-scroll">
          <table class="agents" aria-label="Agents">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">IP address</th>
                <th scope="col">OS</th>
                <th scope="col">Architecture</th>
                <th scope="col">CPUs</th>
                <th scope="col">Memory</th>
                <th scope="col">Engine</th>
                <th scope="col">Running builds</th>
                <th scope="col">Last used</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((agent) => (
                <tr key={agent.id}>
                  <td>
                    <a href={`${BASE}/${agent.id}`}>{agent.name}</a>
                  </td>
                  <td>
                    <OnlineBadge agent={agent} now={now} />
                    {agent.paused === 1 && <span class="badge agent-paused">paused</span>}
                  </td>
                  <td>{agent.ipAddress}</td>
                  <td>{`${agent.osName} ${agent.osVersion}`}</td>
                  <td>{agent.osArch}</td>
                  <td>{agent.cpus}</td>
                  <td>{formatBytes(agent.memory)}</td>
                  <td>{agent.engine ?? '—'}</td>
                  <td>{running.get(agent.id) ?? 0}</td>
                  <td>
                    <DateTime ms={agent.lastUsedDate} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager action={BASE} list={list} />
    </SettingsLayout>
  );
}

/** The rows `name.i` / `value.i` of a submitted attributes form, as typed; rows with a blank name are left out. */
function attributeRows(form: Record<string, string>): [string, string][] {
  const rows: [string, string][] = [];
  for (let i = 0; form[`name.${i}`] !== undefined; i++) {
    const name = form[`name.${i}`].trim();
    if (name !== '') rows.push([name, form[`value.${i}`] ?? '']);
  }
  return rows;
}

/** The attributes a submitted form gives. BadRequest for a name given twice. */
function submittedAttributes(form: Record<string, string>): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [name, value] of attributeRows(form)) {
    if (Object.hasOwn(attributes, name)) throw new BadRequest(`Attribute '${name}' is given twice`);
    attributes[name] = value;
  }
  return attributes;
}

/** The attributes of an online agent as a form (one empty row to add one), or as a list. */
function Attributes({ page, agent, entries, online }: { page: PageContext; agent: AgentRow; entries: [string, string][]; online: boolean }) {
  if (!online) {
    return (
      <section aria-labelledby="attributes-heading">
        <h2 id="attributes-heading">Attributes</h2>
        {entries.length === 0 ? (
          <p class="empty">No attribute.</p>
        ) : (
          <dl class="facts" aria-label="Attributes">
            {entries.map(([name, value]) => [<dt key={`n-${name}`}>{name}</dt>, <dd key={`v-${name}`}>{value}</dd>])}
          </dl>
        )}
        <p class="meta">Attributes can be edited while the agent is online.</p>
      </section>
    );
  }
  const rows = [...entries, ['', '']];
  return (
    <section aria-labelledby="attributes-heading">
      <h2 id="attributes-heading">Attributes</h2>
      <PostForm page={page} action={`${BASE}/${agent.id}/attributes`} class="settings-form" label="Attributes">
        <input type="hidden" name="op" value="attributes" />
        <p class="meta">Leave a name empty to remove its attribute. Jobs select agents by attribute with their executor's agent selector.</p>
        {rows.map(([name, value], i) => (
          <div key={i} class="agent-attribute">
            <Field name={`name.${i}`} label={`Attribute ${i + 1} name`} value={name} autocomplete="off" />
            <Field name={`value.${i}`} label={`Attribute ${i + 1} value`} value={value} autocomplete="off" />
          </div>
        ))}
        <p>
          <button type="submit">Save attributes</button>
        </p>
      </PostForm>
    </section>
  );
}

async function agentPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const id = idParam(page, 'id');
  const agent = await getAgent(page.ctx, id);
  const now = page.ctx.now();
  const online = isAgentOnline(agent, now);
  const [attributes, running, recent] = await Promise.all([
    getAgentAttributes(page.ctx, id),
    buildsRanOnAgent(page.ctx, id, { running: true, limit: BUILDS_SHOWN }),
    buildsRanOnAgent(page.ctx, id, { running: false, limit: BUILDS_SHOWN }),
  ]);
  const paths = await buildProjectPaths(page.ctx, [...running, ...recent]);
  const base = `${BASE}/${id}`;
  // a refused change shows the rows as typed
  const shownAttributes = error && page.form.op === 'attributes' ? attributeRows(page.form) : Object.entries(attributes);
  return (
    <SettingsLayout page={page} area="administration" section="agents" title={`Agent ${agent.name}`} error={error}>
      <dl class="facts" aria-label="Agent">
        <dt>Status</dt>
        <dd>
          <OnlineBadge agent={agent} now={now} />
          {agent.paused === 1 && <span class="badge agent-paused">paused</span>}
        </dd>
        <dt>IP address</dt>
        <dd>{agent.ipAddress}</dd>
        <dt>OS</dt>
        <dd>{`${agent.osName} ${agent.osVersion} (${agent.osArch})`}</dd>
        <dt>CPUs</dt>
        <dd>{agent.cpus}</dd>
        <dt>Memory</dt>
        <dd>{formatBytes(agent.memory)}</dd>
        <dt>Container engine</dt>
        <dd>{agent.engine ?? 'none: runs remote shell jobs only'}</dd>
        <dt>Last used</dt>
        <dd>
          <DateTime ms={agent.lastUsedDate} />
        </dd>
        <dt>Token</dt>
        <dd>
          <a href={`${BASE}/tokens#token-${agent.tokenId}`}>{`#${agent.tokenId}`}</a>
        </dd>
      </dl>
      <p>
        {agent.paused === 1 ? (
          <InlineForm page={page} action={`${base}/resume`} label="Resume agent">
            Resume
          </InlineForm>
        ) : (
          <InlineForm page={page} action={`${base}/pause`} label="Pause agent">
            Pause
          </InlineForm>
        )}{' '}
        <span class="meta">{agent.paused === 1 ? 'Paused: it is given no new job.' : 'A paused agent is given no new job; its running ones go on.'}</span>
      </p>
      <Attributes page={page} agent={agent} entries={shownAttributes} online={online} />
      <section aria-labelledby="running-heading">
        <h2 id="running-heading">Running builds</h2>
        {running.length === 0 ? <p class="empty">No running build.</p> : <BuildTable builds={running} paths={paths} now={now} />}
      </section>
      <section aria-labelledby="recent-heading">
        <h2 id="recent-heading">Recent builds</h2>
        {recent.length === 0 ? <p class="empty">No build yet.</p> : <BuildTable builds={recent} paths={paths} now={now} />}
        <p>
          <a href={`/~builds?${new URLSearchParams({ query: `ran on "${agent.name.replace(/["\\]/g, '\\$&')}"` })}`}>All builds this agent ran</a>
        </p>
      </section>
      <section aria-labelledby="remove-heading">
        <h2 id="remove-heading">Remove agent</h2>
        <p class="meta">Its token goes with it, so it cannot connect again; the builds it ran stay, no longer naming it; the builds it runs end.</p>
        <PostForm page={page} action={`${base}/remove`} class="settings-form" label="Remove agent">
          <Field name="confirm" label={`Type the agent's name (${agent.name}) to confirm`} required autocomplete="off" />
          <p>
            <button type="submit" class="danger">{`Remove agent ${agent.name}`}</button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

async function tokensPage(page: PageContext, error: string | null = null, created: { id: number; value: string } | null = null): Promise<PageResult> {
  const tokens = await queryAgentTokens(page.ctx, undefined, 0, TOKENS_SHOWN);
  const agentOf = await agentsOfTokens(
    page.ctx,
    tokens.map((t) => t.id),
  );
  return (
    <SettingsLayout page={page} area="administration" section="agents" title="Agent tokens" error={error}>
      <p>
        <a href={BASE}>Agents</a>
      </p>
      <Notice notice={created && `Token #${created.id} created: ${created.value}`} />
      <p>
        An agent connects with a token: <code>gitloom agent --server {page.ctx.config.serverUrl} --token &lt;token&gt;</code>. One agent per token; deleting a
        token removes its agent.
      </p>
      <PostForm page={page} action={`${BASE}/tokens`} label="New token">
        <p>
          <button type="submit" class="primary">
            Create token
          </button>
        </p>
      </PostForm>
      {tokens.length === 0 ? (
        <p class="empty">No agent token yet.</p>
      ) : (
        <ul class="list" aria-label="Agent tokens">
          {tokens.map((token) => {
            const agent = agentOf.get(token.id);
            return (
              <li key={token.id} id={`token-${token.id}`} class="row">
                <span>
                  <code>{token.value}</code> {agent ? <a href={`${BASE}/${agent.id}`}>{agent.name}</a> : <span class="meta">no agent yet</span>}
                  <span class="meta">
                    {' · created '}
                    <DateTime ms={token.createDate} />
                  </span>
                </span>
                <InlineForm
                  page={page}
                  action={`${BASE}/tokens/delete`}
                  label={`Delete token ${token.id}`}
                  fields={{ id: String(token.id) }}
                  buttonClass="danger"
                  buttonLabel={agent ? `Delete token ${token.id} and agent ${agent.name}` : `Delete token ${token.id}`}
                >
                  Delete
                </InlineForm>
              </li>
            );
          })}
        </ul>
      )}
    </SettingsLayout>
  );
}

export const agentAdministrationPages: PageModule = {
  pages: [
    settingsRoute('administration', 'GET', '/agents', agentList),
    settingsRoute('administration', 'GET', '/agents/tokens', (page) => tokensPage(page)),
    settingsPost(
      'administration',
      '/agents/tokens',
      async (page) => {
        const token = await getAgentToken(page.ctx, await createAgentToken(page.ctx));
        return tokensPage(page, null, token);
      },
      (page, message) => tokensPage(page, message),
    ),
    settingsPost(
      'administration',
      '/agents/tokens/delete',
      async (page) => {
        await deleteAgentToken(page.ctx, formId(page, 'token'));
        return redirect(`${BASE}/tokens`);
      },
      (page, message) => tokensPage(page, message),
    ),
    settingsRoute('administration', 'GET', '/agents/:id', (page) => agentPage(page)),
    entryChange('agents', '/attributes', (page, id) => updateAgentAttributes(page.ctx, id, submittedAttributes(page.form)), agentPage),
    entryChange('agents', '/pause', (page, id) => setAgentPaused(page.ctx, id, true), agentPage),
    entryChange('agents', '/resume', (page, id) => setAgentPaused(page.ctx, id, false), agentPage),
    entryChange(
      'agents',
      '/remove',
      async (page, id) => {
        const agent = await getAgent(page.ctx, id);
        if ((page.form.confirm ?? '').trim() !== agent.name) throw new BadRequest(`Type the agent's name (${agent.name}) to confirm the removal`);
        await removeAgent(page.ctx, id);
      },
      agentPage,
      'list',
    ),
  ],
};
