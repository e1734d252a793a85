// What the shared request path knows of OAuth (src/oauth/ is the authorization server): the
// shape of an access token, the hash it is stored and looked up by (bound to the resource it was
// issued for), and the MCP endpoint's 401 challenge that starts discovery.
import { createHash } from 'node:crypto';
import { ALL_SCOPES } from './scopes.ts';

export const ACCESS_TOKEN_PATTERN = /^svc_at_[A-Za-z0-9_-]{43}$/;

/** The one protected resource this service is: its MCP endpoint (REST accepts its tokens too). */
export const resourceOf = (baseUrl: string): string => `${baseUrl}/api/v1/mcp`;

/**
 * What an access token is stored as: sha256(resource || LF || token). The server hashes what it
 * is sent with its own resource, so a token issued for another resource matches no row.
 */
export const oauthAccessHash = (resource: string, token: string): Buffer =>
  createHash('sha256').update(`${resource}\n${token}`).digest();

/** The RFC 9728 path-suffixed address of the MCP endpoint's protected resource metadata. */
export const resourceMetadataUrl = (baseUrl: string) => `${baseUrl}/.well-known/oauth-protected-resource/api/v1/mcp`;

/**
 * The MCP endpoint's challenge (RFC 9728 5.1, MCP "Protected Resource Metadata Discovery" and
 * "Scope Challenge Handling"): on a 401 without a credential, where the metadata is and every
 * scope; with `invalid_token` when a bearer credential was sent and refused (RFC 6750 3.1); on a
 * 403 `insufficient_scope`, the scope the call needs, so that the client can ask for it (step-up).
 */
export function mcpChallenge(baseUrl: string, refusal?: { error: 'invalid_token' } | { error: 'insufficient_scope'; scope: string }): string {
  const metadata = `resource_metadata="${resourceMetadataUrl(baseUrl)}"`;
  const all = `scope="${ALL_SCOPES.join(' ')}"`;
  if (!refusal) return `Bearer ${metadata}, ${all}`;
  if (refusal.error === 'invalid_token') return `Bearer ${metadata}, ${all}, error="invalid_token", error_description="The credential is invalid, expired or revoked"`;
  return `Bearer ${metadata}, scope="${refusal.scope}", error="insufficient_scope", error_description="This call needs the ${refusal.scope} scope"`;
}
