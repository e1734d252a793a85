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

/**
 * The resource a `resource` parameter (RFC 8707) names, when it names this service: its MCP
 * endpoint, or the service as a whole (the identifier of the root-form metadata document); scheme
 * and host in any case (MCP: servers SHOULD accept uppercase ones). Either way the answer is the
 * one resource every grant and token is bound to; null for any other resource.
 */
export function canonicalResource(value: string, baseUrl: string): string | null {
  if (value.includes('#')) return null;
  let href: string;
  try { href = new URL(value).href; } catch { return null; }
  const ours = resourceOf(baseUrl);
  return href === new URL(ours).href || href === new URL(baseUrl).href ? ours : null;
}

/**
 * RFC 9728 metadata. Its `resource` is the identifier the well-known address was made from
 * (section 3.3): the MCP endpoint at the path-suffixed address, the service itself at the root one.
 */
export function protectedResourceMetadata(baseUrl: string, root = false) {
  return {
    resource: root ? baseUrl : resourceOf(baseUrl),
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
