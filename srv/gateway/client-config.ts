/**
 * The MCP client configuration shown with a new key: both tool servers (chain A, chain B), each
 * started with the key in its environment, pointed at this deployment.
 */
export function mcpClientConfiguration(key: string, baseUrl: string) {
  const server = (product: 'chain-a' | 'chain-b') => ({
    command: 'npx',
    args: ['-y', 'chain-access-mcp', product],
    env: { CHAIN_ACCESS_URL: baseUrl, CHAIN_ACCESS_KEY: key },
  })
  return { mcpServers: { 'chain-access-chain-a': server('chain-a'), 'chain-access-chain-b': server('chain-b') } }
}
