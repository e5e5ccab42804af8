import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { circuitFile, type KeysManifest } from '../chains/chain-b/zk/circuits.ts'
import { chainB } from '../chains/chain-b/index.ts'
import type { ZeroKnowledge } from '../chains/chain-b/zk/index.ts'
import { TRANSCRIPT_FILE } from '../chains/chain-b/zk/transcript.ts'
import { sendError } from '../lib/http-safety.ts'
import { CONTENT_TYPES, keyFile, publishedManifest, ZK_CONFIG_PATH, type KeyFile } from './manifest.ts'

/**
 * `/zk-config`: the circuits' keys for provers, free and without a key (spec 8.2), mounted at
 * bootstrap. `GET /zk-config` (or `/zk-config/manifest.json`) answers the manifest;
 * `GET|HEAD /zk-config/<circuit>/<file>` streams one of the circuit's three files, with the
 * manifest's SHA-256 as its ETag; `GET /zk-config/transcript.json` answers the trusted-setup
 * ceremony's transcript, so anyone can verify the served keys (`npm run ceremony -- fetch`, then
 * `verify`). The keys are those of the chain-B connector, which proves and verifies with them. Only
 * names the manifest lists, and the transcript, reach the filesystem.
 */

type Request = IncomingMessage
type Next = (error?: unknown) => void

const CACHE_CONTROL = 'public, no-cache'
const READ_METHODS = ['GET', 'HEAD']

/** The express middleware, mounted as `app.use('/zk-config', serveZkConfig)`: req.url is the rest of the path. */
export function serveZkConfig(req: Request, res: ServerResponse, next: Next) {
  answer(req, res).catch(next)
}

async function answer(req: Request, res: ServerResponse) {
  if (!READ_METHODS.includes(req.method ?? '')) return sendError(res, 405, 'METHOD_NOT_ALLOWED', `${ZK_CONFIG_PATH} answers GET and HEAD only`, { allow: READ_METHODS.join(', ') })
  const { keysDir, manifest } = await chainBKeys()
  const path = (req.url ?? '/').split('?')[0]
  if (path === '/' || path === '' || path === '/manifest.json') return sendManifest(req, res, manifest)
  if (path === `/${TRANSCRIPT_FILE}`) return sendTranscript(req, res, keysDir)
  const [circuit, name, ...more] = path.slice(1).split('/')
  const file = more.length ? undefined : keyFile(manifest, circuit, name ?? '')
  if (!file) return notFound(res, path)
  return sendFile(req, res, keysDir, file)
}

async function chainBKeys(): Promise<Pick<ZeroKnowledge, 'keysDir' | 'manifest'>> {
  const chain = await chainB()
  return chain.zk
}

const notFound = (res: ServerResponse, path: string) =>
  sendError(res, 404, 'ZK_FILE_NOT_FOUND', `No zero-knowledge key file at ${ZK_CONFIG_PATH}${path.slice(0, 200)}: GET ${ZK_CONFIG_PATH} lists the circuits and their files`)

/** The manifest's body and ETag, made once per keys manifest. */
const manifestBodies = new WeakMap<KeysManifest, { body: string; etag: string }>()

function manifestBody(manifest: KeysManifest) {
  let made = manifestBodies.get(manifest)
  if (!made) {
    const body = JSON.stringify(publishedManifest(manifest))
    manifestBodies.set(manifest, (made = { body, etag: quoted(createHash('sha256').update(body).digest('hex')) }))
  }
  return made
}

function sendManifest(req: Request, res: ServerResponse, manifest: KeysManifest) {
  const { body, etag } = manifestBody(manifest)
  if (notModified(req, res, etag)) return
  res.setHeader('content-type', 'application/json')
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(req.method === 'HEAD' ? undefined : body)
}

/** The ceremony's transcript beside the keys (a few kB, read on each request), for `npm run ceremony -- verify` against the served keys. */
async function sendTranscript(req: Request, res: ServerResponse, keysDir: string) {
  const body = await readFile(join(keysDir, TRANSCRIPT_FILE)).catch(() => undefined)
  if (!body) return notFound(res, `/${TRANSCRIPT_FILE}`)
  if (notModified(req, res, quoted(createHash('sha256').update(body).digest('hex')))) return
  res.setHeader('content-type', 'application/json')
  res.setHeader('content-length', body.length)
  res.end(req.method === 'HEAD' ? undefined : body)
}

async function sendFile(req: Request, res: ServerResponse, keysDir: string, file: KeyFile) {
  const path = circuitFile(keysDir, file.circuit, file.name)
  const size = await sizeOf(path)
  if (size === undefined) {
    cds.log('zk-config').warn(`${path} is listed in the keys manifest but cannot be read`)
    return notFound(res, `/${file.circuit}/${file.name}`)
  }
  if (notModified(req, res, quoted(file.sha256))) return
  res.setHeader('content-type', CONTENT_TYPES[file.role])
  res.setHeader('content-length', size)
  if (req.method === 'HEAD') return void res.end()
  // Once the headers are out, a failed read or a client that went away can only end the response.
  await pipeline(createReadStream(path), res).catch(error => cds.log('zk-config').debug(`sending ${path} ended early:`, error?.message))
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    const stats = await stat(path)
    return stats.isFile() ? stats.size : undefined
  } catch {
    return undefined
  }
}

const quoted = (tag: string) => `"${tag}"`

/** Sets the validators; answers 304 when If-None-Match names the ETag (weakly compared, as RFC 9110 says for If-None-Match). */
function notModified(req: Request, res: ServerResponse, etag: string): boolean {
  res.setHeader('etag', etag)
  res.setHeader('cache-control', CACHE_CONTROL)
  if (!ifNoneMatchNames(req.headers['if-none-match'], etag)) return false
  res.statusCode = 304
  res.end()
  return true
}

function ifNoneMatchNames(header: string | undefined, etag: string): boolean {
  if (!header) return false
  if (header.trim() === '*') return true
  return header.split(',').some(tag => tag.trim().replace(/^W\//, '') === etag)
}
