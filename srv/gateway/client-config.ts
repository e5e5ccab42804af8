/**
 * How to use a key, printed with it. The MCP tool servers (chain A, chain B) are not available
 * yet, so no MCP client configuration is offered: the print-out says so and shows a plain call.
 */
export function keyUsage(baseUrl: string): string {
  return [
    `Send it as Authorization: Bearer <key> (or x-agent-token: <key>) to ${baseUrl}, for example:`,
    '',
    `  curl -H "Authorization: Bearer <key>" ${baseUrl}/me`,
    '',
    'MCP servers: not yet available.',
  ].join('\n')
}
