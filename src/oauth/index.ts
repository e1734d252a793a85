// OAuth 2.1 for MCP clients (docs/oauth.md): this service is its own authorization server.
// Its endpoints are public pages; its tokens are resolved by app_hidden.authenticate like keys.
import type { Area } from '../registry/area.ts';
import { OAUTH_PAGES } from './routes.ts';
import { connectedAppsPages } from './connected-apps.ts';

export const oauth: Area = {
  name: 'oauth',
  operations: [],
  pages: [...OAUTH_PAGES, ...connectedAppsPages],
};
