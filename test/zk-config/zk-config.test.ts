import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CIRCUIT_IDS, CIRCUITS, circuitFiles } from '../../srv/chains/chain-b/zk/circuits.ts'
import { zkConfig } from '../../srv/chains/chain-b/config.ts'
import { rawRequest } from '../support/gateway.ts'

/**
 * /zk-config self-hosted (the hosted gateway off, no credentials anywhere): the manifest of the
 * circuits and their files, each file with its manifest SHA-256 as ETag, 304 on a match, and 404
 * for anything that is not one of the listed files, also for raw `..` targets no client normalised.
 */
const app: { url: string } = cds.test(__dirname + '/../..') as any

const keysDir = () => zkConfig().keysDir
const onDisk = (id: string, name: string) => readFileSync(join(keysDir(), id, name))
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => fetch(app.url + path, { method, headers })

const FILES = CIRCUIT_IDS.flatMap(id => Object.entries(circuitFiles(id)).map(([role, name]) => ({ id, role, name })))
const CONTENT_TYPES: Record<string, string> = { wasm: 'application/wasm', zkey: 'application/octet-stream', verificationKey: 'application/json' }

describe('the manifest', () => {
  test('lists the four circuits with their public signals, claims and files, each SHA-256 that of the file on disk', async () => {
    const response = await get('/zk-config')
    const manifest = await response.json()
    expect(manifest).toMatchObject({ development: true, ceremony: expect.stringMatching(/powers of tau/) })
    expect(manifest.circuits.map((circuit: { id: string }) => circuit.id)).toEqual(['field_predicate', 'field_equality', 'field_membership', 'document_compare'])
    for (const circuit of manifest.circuits) {
      const id = circuit.id as keyof typeof CIRCUITS
      expect(circuit).toMatchObject({ publicSignals: [...CIRCUITS[id].publicSignals], claims: [...CIRCUITS[id].claims], constraints: expect.any(Number) })
      expect(circuit.constraints).toBeGreaterThan(0)
      for (const [role, name] of Object.entries(circuitFiles(id))) {
        const bytes = onDisk(id, name)
        expect(circuit.files[role]).toEqual({ url: `/zk-config/${id}/${name}`, sha256: sha256(bytes), size: bytes.length })
      }
    }
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('cache-control')).toBe('public, no-cache')
    // Self-hosted: no gateway in front, no credentials asked.
    expect(response.headers.get('x-access-units-charged')).toBeNull()
  })

  test('is also at /zk-config/manifest.json and /zk-config/, with the same ETag, and a query changes nothing', async () => {
    const bodies = await Promise.all(['/zk-config', '/zk-config/', '/zk-config/manifest.json', '/zk-config?circuit=x'].map(async path => {
      const response = await get(path)
      return { body: await response.text(), status: response.status, etag: response.headers.get('etag') }
    }))
    expect(new Set(bodies.map(answer => answer.body)).size).toBe(1)
    expect(new Set(bodies.map(answer => answer.etag)).size).toBe(1)
    expect(bodies[0].etag).toMatch(/^"[0-9a-f]{64}"$/)
    expect(bodies.map(answer => answer.status)).toEqual([200, 200, 200, 200])
  })

  test('answers 304 to its own ETag', async () => {
    const etag = (await get('/zk-config')).headers.get('etag')!
    const response = await get('/zk-config', { 'if-none-match': etag })
    expect(await response.text()).toBe('')
    expect(response.status).toBe(304)
    expect(response.headers.get('etag')).toBe(etag)
  })
})

describe('the files', () => {
  test.each(FILES)('$id/$name downloads as on disk, its ETag the quoted SHA-256', async ({ id, role, name }) => {
    const response = await get(`/zk-config/${id}/${name}`)
    const body = Buffer.from(await response.arrayBuffer())
    const expected = onDisk(id, name)
    expect(body.equals(expected)).toBe(true)
    expect(response.status).toBe(200)
    expect(response.headers.get('etag')).toBe(`"${sha256(expected)}"`)
    expect(response.headers.get('content-type')).toBe(CONTENT_TYPES[role])
    expect(response.headers.get('content-length')).toBe(String(expected.length))
    expect(response.headers.get('cache-control')).toBe('public, no-cache')
  })

  test('HEAD answers the headers of GET and no body', async () => {
    const { name } = FILES[1]
    const bytes = onDisk('field_predicate', name)
    const response = await rawRequest(app.url, 'HEAD', `/zk-config/field_predicate/${name}`)
    expect(response.body).toBe('')
    expect(response.status).toBe(200)
    expect(response.headers).toMatchObject({ etag: `"${sha256(bytes)}"`, 'content-length': String(bytes.length), 'content-type': 'application/octet-stream' })
  })
})

describe('the ceremony transcript', () => {
  test('/zk-config/transcript.json answers the keys\' transcript as on disk, its ETag the quoted SHA-256, 304 on it', async () => {
    const expected = readFileSync(join(keysDir(), 'transcript.json'))
    const response = await get('/zk-config/transcript.json')
    expect(Buffer.from(await response.arrayBuffer()).equals(expected)).toBe(true)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('etag')).toBe(`"${sha256(expected)}"`)
    const again = await get('/zk-config/transcript.json', { 'if-none-match': `"${sha256(expected)}"` })
    expect(again.status).toBe(304)
  })

  test('it lists every file the manifest publishes, by the same SHA-256', async () => {
    const transcript = await (await get('/zk-config/transcript.json')).json()
    const manifest = await (await get('/zk-config')).json()
    for (const circuit of manifest.circuits) for (const role of ['wasm', 'zkey', 'verificationKey']) expect(transcript.keys[circuit.id][role]).toBe(circuit.files[role].sha256)
  })
})

describe('If-None-Match', () => {
  const path = '/zk-config/field_equality/verification_key.json'
  const etag = () => `"${sha256(onDisk('field_equality', 'verification_key.json'))}"`

  test.each([
    ['the ETag itself', (tag: string) => tag],
    ['its weak form', (tag: string) => `W/${tag}`],
    ['a list holding it', (tag: string) => `"${'0'.repeat(64)}", ${tag}`],
    ['*', () => '*'],
  ])('%s: 304, no body, the validators again', async (_name, header) => {
    const response = await get(path, { 'if-none-match': header(etag()) })
    expect(await response.text()).toBe('')
    expect(response.status).toBe(304)
    expect(response.headers.get('etag')).toBe(etag())
    expect(response.headers.get('cache-control')).toBe('public, no-cache')
  })

  test('another ETag: the file, 200', async () => {
    const response = await get(path, { 'if-none-match': `"${'0'.repeat(64)}"` })
    expect(await response.json()).toMatchObject({ protocol: 'groth16', curve: 'bn128' })
    expect(response.status).toBe(200)
  })
})

describe('anything else under /zk-config', () => {
  test.each([
    ['an unknown circuit', '/zk-config/no_such_circuit/no_such_circuit.wasm'],
    ['another circuit\'s file', '/zk-config/field_predicate/field_equality.wasm'],
    ['a build file that is not served', '/zk-config/field_predicate/field_predicate.r1cs'],
    ['the manifest under a circuit', '/zk-config/field_predicate/manifest.json'],
    ['the transcript under a circuit', '/zk-config/field_predicate/transcript.json'],
    ['the verification record', '/zk-config/verification.json'],
    ['a circuit folder', '/zk-config/field_predicate'],
    ['a trailing slash after a file', '/zk-config/field_predicate/field_predicate.wasm/'],
    ['a file name in other case', '/zk-config/field_predicate/FIELD_PREDICATE.WASM'],
    ['a dot segment up to the project', '/zk-config/../package.json'],
    ['dot segments out of a circuit', '/zk-config/field_predicate/../../package.json'],
    ['dot segments to another circuit\'s key', '/zk-config/field_predicate/../field_equality/field_equality.zkey'],
    ['encoded dot segments', '/zk-config/%2e%2e/%2e%2e/package.json'],
    ['an encoded slash', '/zk-config/field_predicate%2f..%2f..%2fpackage.json/x'],
    ['an absolute path', '/zk-config//etc/passwd'],
  ])('%s: 404 ZK_FILE_NOT_FOUND', async (_name, target) => {
    const response = await rawRequest(app.url, 'GET', target)
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'ZK_FILE_NOT_FOUND', message: expect.stringContaining('/zk-config') })
    expect(response.status).toBe(404)
  })

  test.each(['POST', 'PUT', 'DELETE', 'PATCH'])('%s: 405, GET and HEAD allowed', async method => {
    const response = await rawRequest(app.url, method, '/zk-config/field_predicate/field_predicate.wasm', { 'content-type': 'application/json' }, '{}')
    expect(JSON.parse(response.body).error.code).toBe('METHOD_NOT_ALLOWED')
    expect(response.status).toBe(405)
    expect(response.headers.allow).toBe('GET, HEAD')
  })
})
