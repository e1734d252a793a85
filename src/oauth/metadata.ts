// Discovery (MCP authorization, "Authorization Server Discovery"): the MCP endpoint's 401 names
// the protected resource metadata (RFC 9728), which names this service as its authorization
// server, whose metadata (RFC 8414) lists the endpoints below. One process is both.
import { ALL_SCOPES } from '../auth/scopes.ts';
import { resourceOf } from '../auth/oauth.ts';

export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  protectedResource: '/.well-known/oauth-protected-resource',
  authorizationServer: '/.well-known/oauth-authorization-server',
} as const;

export function protectedResourceMetadata(baseUrl: string) {
  return {
    resource: resourceOf(baseUrl),
    authorization_servers: [baseUrl],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'Receptionist, CRM and follow-up (MCP)',
  };
}

export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: baseUrl + OAUTH_PATHS.authorize,
    token_endpoint: baseUrl + OAUTH_PATHS.token,
    registration_endpoint: baseUrl + OAUTH_PATHS.register,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
