// The whole flow with the MCP SDK's own client: StreamableHTTPClientTransport with an
// OAuthClientProvider, from the first 401 through discovery, dynamic registration, consent and
// the code exchange, to a tool call; then a refresh when the access token is refused.
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { TestApp } from '../helpers/app.ts';
import type { Applied } from '../../src/admin/fixture.ts';
import { REDIRECT, as, decide, openAuthorization, startOAuthApp } from './helpers.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, acme } = await startOAuthApp()); });
test.after.always(async () => { await app?.close(); });

class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() { return REDIRECT; }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'SDK test agent', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'sdk-state'; }
  clientInformation() { return this.info; }
  saveClientInformation(info: OAuthClientInformationMixed) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens: OAuthTokens) { this.saved = tokens; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(v: string) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

const mcpUrl = () => new URL(`${app.url}/api/v1/mcp`);

async function connected(provider: MemoryProvider): Promise<Client> {
  const client = new Client({ name: 'sdk-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

test('from the first 401 to a tool call, then a refresh', async (t) => {
  const provider = new MemoryProvider();
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  const first = new Client({ name: 'sdk-test', version: '1.0.0' });
  await t.throwsAsync(first.connect(transport), { instanceOf: UnauthorizedError });

  // the SDK discovered, registered and sent the person to the authorization endpoint
  t.truthy(provider.info?.client_id);
  const url = provider.authorizationUrl!;
  t.is(url.origin + url.pathname, `${app.url}/oauth/authorize`);
  t.is(url.searchParams.get('resource'), `${app.url}/api/v1/mcp`);
  t.is(url.searchParams.get('code_challenge_method'), 'S256');

  const consent = await openAuthorization(url.href, await as(app, 'sam@acme.example'));
  t.is(consent.status, 200);
  t.regex(consent.html, /SDK test agent/);
  t.regex(consent.html, /127\.0\.0\.1:7777/);
  const back = await decide(await as(app, 'sam@acme.example'), consent, 'approve');
  t.is(back.searchParams.get('state'), 'sdk-state');
  t.is(back.searchParams.get('iss'), app.url);
  await transport.finishAuth(back.searchParams.get('code')!);
  t.truthy(provider.saved?.access_token);
  t.truthy(provider.saved?.refresh_token);

  const client = await connected(provider);
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  t.true(tools.includes('me_get'));
  const me = await client.callTool({ name: 'me_get', arguments: {} });
  t.falsy(me.isError);
  const body = me.structuredContent as any;
  t.is(body.api_key, null);
  t.is(body.oauth_client.client_id, provider.info!.client_id);
  t.is(body.oauth_client.client_name, 'SDK test agent');
  t.is(body.principal.user_id, acme.ids.staff);
  await client.close();

  // an access token the server no longer accepts: the SDK refreshes and carries on
  const old = provider.saved!;
  await app.db.owner.query(`update app_private.oauth_tokens set expires_at = now() - interval '1 second' where kind = 'access'`);
  provider.saved = { ...old };
  const again = await connected(provider);
  t.not(provider.saved.access_token, old.access_token);
  t.not(provider.saved.refresh_token, old.refresh_token);
  t.falsy((await again.callTool({ name: 'me_get', arguments: {} })).isError);
  await again.close();
});
