import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { z } from 'zod'
import { GatewayClient, GatewayError, type Answer, type QueryOptions, type Units } from './gateway-client.ts'

/**
 * How a tool is declared: a name from the spec's table, a zod input shape whose descriptions an
 * agent can act on, the shape of what it answers, truthful annotations, and `run`, which calls the
 * gateway through a Calls view (it adds up the units of every call the tool makes).
 */
interface Tool<Input extends z.ZodRawShape, Output extends z.ZodRawShape> {
  name: string
  title: string
  description: string
  input: Input
  output: Output
  annotations: ToolAnnotations
  /** The answer, checked against `output` before it is sent. */
  run(args: z.infer<z.ZodObject<Input>>, calls: Calls): Promise<Record<string, unknown>>
}

/** The usual combinations of the four hints, each stated once. */
export const READS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true }
/** Makes a record (a build, a request, a job) and answers it; calling again makes another. */
export const CREATES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
/** Computes an answer and records nothing (but is metered): same input, same answer. */
export const COMPUTES: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }

/** A refusal of the tool's own (bad JSON in an argument, a missing alternative), said before any call. */
export class ToolInputError extends Error {}

/** Calls to the gateway on behalf of one tool call: bodies answered directly, units summed, progress reported. */
export class Calls {
  private readonly client: GatewayClient
  private readonly extra: RequestHandlerExtra<ServerRequest, ServerNotification>
  units?: Units

  constructor(client: GatewayClient, extra: RequestHandlerExtra<ServerRequest, ServerNotification>) {
    this.client = client
    this.extra = extra
  }

  get signal() { return this.extra.signal }

  action<T = Record<string, unknown>>(service: string, action: string, body: Record<string, unknown>) {
    return this.counted(this.client.action<T>(service, action, body, this.signal))
  }

  call<T = Record<string, unknown>>(service: string, fn: string, parameters: Record<string, string | number | boolean | undefined> = {}) {
    return this.counted(this.client.call<T>(service, fn, parameters, this.signal))
  }

  read<T = Record<string, unknown>>(service: string, resource: string, options: QueryOptions = {}) {
    return this.counted(this.client.read<T>(service, resource, options, this.signal))
  }

  /** Tells the client how far a long tool call is, when it asked (a progress token in the request). */
  async progress(progress: number, total: number | undefined, message: string) {
    const progressToken = this.extra._meta?.progressToken
    if (progressToken === undefined) return
    await this.extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, ...(total !== undefined && { total }), message } })
  }

  private async counted<T>(pending: Promise<Answer<T>>): Promise<T> {
    const { body, units } = await pending
    if (units) this.units = { charged: (this.units?.charged ?? 0) + units.charged, left: units.left }
    return body
  }
}

const unitsShape = {
  units: z.object({
    charged: z.number().describe('Units this tool call cost in all'),
    left: z.number().describe('Units the key has left'),
  }).optional().describe('Present on the hosted gateway, which meters every call'),
}

/** Parses a JSON text argument (or takes a value given natively), naming the argument when it is not JSON. */
export function jsonArgument(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    throw new ToolInputError(`${name} is not valid JSON`)
  }
}

/** JSON text for an OData parameter typed as JSON text: a value given natively is serialised, text is passed on. */
export const jsonText = (value: unknown) => value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value)

export function register<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(server: McpServer, client: GatewayClient, tool: Tool<Input, Output>) {
  server.registerTool(tool.name, {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input,
    outputSchema: z.looseObject({ ...tool.output, ...unitsShape }),
    annotations: { title: tool.title, ...tool.annotations },
  }, (async (args: z.infer<z.ZodObject<Input>>, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> => {
    const calls = new Calls(client, extra)
    try {
      const result = await tool.run(args, calls)
      const structured = { ...result, ...(calls.units && { units: calls.units }) }
      return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }] }
    } catch (error) {
      return toolError(error, tool.name)
    }
  }) as never)
}

/** A failed tool call as the agent reads it: what went wrong and what to do, then the details as JSON. */
function toolError(error: unknown, toolName: string): CallToolResult {
  if (error instanceof GatewayError) {
    return { isError: true, content: [{ type: 'text', text: `${error.advice()}\n${JSON.stringify(error.summary())}` }] }
  }
  if (error instanceof ToolInputError) return { isError: true, content: [{ type: 'text', text: `Invalid arguments for ${toolName}: ${error.message}` }] }
  console.error(`${toolName} failed:`, error)
  return { isError: true, content: [{ type: 'text', text: `${toolName} failed inside the tool server: ${(error as Error)?.message ?? error}` }] }
}
