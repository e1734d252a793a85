// A raw JSON-RPC POST to the MCP endpoint, for what the SDK's client would not send (batches,
// stateless calls, bodies that are not JSON-RPC).
export function mcpRpc(app: { url: string }, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${app.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}
