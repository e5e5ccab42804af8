import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { createReadStream, readFileSync, statSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { mcpTarballName } from '../../mcp/names.ts'
import { builtFile } from '../lib/app-files.ts'
import { sendError } from '../lib/http-safety.ts'

/**
 * `/mcp`: the MCP tool servers' npm package (`npm run build:mcp`), free and without a key, so the
 * configuration printed with a key can run them with `npx --package <address>` on any machine. The
 * address holds the tarball's SHA-256: npx keeps what it installed from an address, so a package
 * built anew gets a new one, and each address is cached for good. Anything else under /mcp is 404.
 */

export const MCP_PACKAGE_PATH = '/mcp'

export interface McpTarball {
  /** Where the file is. */
  file: string
  /** Its route on this server: `/mcp/<first 16 hex of its SHA-256>/chain-access-mcp-<version>.tgz`. */
  route: string
  sha256: string
  size: number
}

const IMMUTABLE = 'public, max-age=31536000, immutable'
const READ_METHODS = ['GET', 'HEAD']

let known: { file: string; mtimeMs: number; size: number; tarball: McpTarball } | undefined

/** The tool servers' package of this version, when it has been built; its hash is computed once per file. */
export function mcpTarball(): McpTarball | undefined {
  const name = mcpTarballName(appVersion())
  const file = join(builtFile('mcpPackage'), name)
  let stats
  try {
    stats = statSync(file)
  } catch {
    return undefined
  }
  if (!stats.isFile()) return undefined
  if (known?.file === file && known.mtimeMs === stats.mtimeMs && known.size === stats.size) return known.tarball
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex')
  const tarball = { file, route: `${MCP_PACKAGE_PATH}/${sha256.slice(0, 16)}/${name}`, sha256, size: stats.size }
  known = { file, mtimeMs: stats.mtimeMs, size: stats.size, tarball }
  return tarball
}

let version: { root: string; version: string } | undefined

/** The application's version (its package.json), which the package carries too. */
function appVersion(): string {
  if (version?.root !== cds.root) version = { root: cds.root, version: JSON.parse(readFileSync(join(cds.root, 'package.json'), 'utf8')).version }
  return version.version
}

/** The express middleware, mounted as `app.use('/mcp', serveMcpPackage)`: req.url is the rest of the path. */
export function serveMcpPackage(req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) {
  answer(req, res).catch(next)
}

async function answer(req: IncomingMessage, res: ServerResponse) {
  if (!READ_METHODS.includes(req.method ?? '')) return sendError(res, 405, 'METHOD_NOT_ALLOWED', `${MCP_PACKAGE_PATH} answers GET and HEAD only`, { allow: READ_METHODS.join(', ') })
  const path = MCP_PACKAGE_PATH + (req.url ?? '/').split('?')[0]
  const tarball = mcpTarball()
  if (!tarball || path !== tarball.route) return notFound(res, path, tarball)
  res.setHeader('etag', `"${tarball.sha256}"`)
  res.setHeader('cache-control', IMMUTABLE)
  res.setHeader('x-content-type-options', 'nosniff')
  if (ifNoneMatchNames(req.headers['if-none-match'], tarball.sha256)) {
    res.statusCode = 304
    return void res.end()
  }
  res.setHeader('content-type', 'application/gzip')
  res.setHeader('content-length', tarball.size)
  res.setHeader('content-disposition', `attachment; filename="${tarball.route.split('/').pop()}"`)
  if (req.method === 'HEAD') return void res.end()
  // Once the headers are out, a failed read or a client that went away can only end the response.
  await pipeline(createReadStream(tarball.file), res).catch(error => cds.log('mcp-package').debug(`sending ${tarball.file} ended early:`, error?.message))
}

function notFound(res: ServerResponse, path: string, tarball: McpTarball | undefined) {
  const served = tarball ? `the tool servers' package is at ${tarball.route}` : 'this server has no package of the tool servers (npm run build:mcp makes it)'
  sendError(res, 404, 'MCP_PACKAGE_NOT_FOUND', `Nothing at ${path.slice(0, 200)}: ${served}`)
}

function ifNoneMatchNames(header: string | undefined, sha256: string): boolean {
  if (!header) return false
  if (header.trim() === '*') return true
  return header.split(',').some(tag => tag.trim().replace(/^W\//, '') === `"${sha256}"`)
}
