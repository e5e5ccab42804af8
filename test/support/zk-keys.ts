import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PUBLISHED_PHASE1, type Transcript, type VerificationRecord } from '../../srv/chains/chain-b/zk/transcript.ts'

/**
 * Keys from a ceremony on a published phase 1: the committed keys (three contributions and a beacon
 * per circuit) with their transcript rewritten as if it had run on the published 2^15 Powers of Tau
 * and a verification record for that transcript, as `npm run ceremony -- verify` writes it. A
 * production start cannot tell (it never reads the phase-1 file), which is what the record is for;
 * a test may spoil one thing.
 */

export const committedKeys = join(__dirname, '..', '..', 'zk/keys')
export const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))
const writeJson = (file: string, value: unknown) => writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
const fixtures: string[] = []

/** Removes the folders productionKeys made (afterAll). */
export const removeKeyFixtures = () => fixtures.splice(0).forEach(dir => rmSync(dir, { recursive: true, force: true }))

export interface Spoil {
  /** A change to the transcript before verify ran (the record matches it). */
  transcript?: (transcript: Transcript, record: VerificationRecord) => void
  /** A change to the transcript after verify ran. */
  afterVerify?: (transcript: Transcript) => void
  files?: (dir: string) => void
  verified?: boolean
}

export function productionKeys(spoil: Spoil = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'zk-production-keys-'))
  fixtures.push(dir)
  const manifest = readJson(join(committedKeys, 'manifest.json'))
  for (const id of Object.keys(manifest.circuits)) {
    mkdirSync(join(dir, id))
    for (const { name } of Object.values(manifest.circuits[id].files) as { name: string }[]) symlinkSync(join(committedKeys, id, name), join(dir, id, name))
  }
  writeJson(join(dir, 'manifest.json'), { ...manifest, development: false })
  const transcript: Transcript = readJson(join(committedKeys, 'transcript.json'))
  const record: VerificationRecord = readJson(join(committedKeys, 'verification.json'))
  const published = PUBLISHED_PHASE1[15]
  transcript.development = false
  transcript.phase1 = { name: published.name, power: 15, blake2b: published.blake2b, origin: 'published', description: 'the Hermez Powers of Tau' }
  transcript.beacon.source = 'chain A block hash at height 1,000,000'
  record.phase1 = { name: published.name, blake2b: published.blake2b }
  spoil.transcript?.(transcript, record)
  writeJson(join(dir, 'transcript.json'), transcript)
  record.transcript = createHash('sha256').update(readFileSync(join(dir, 'transcript.json'))).digest('hex')
  if (spoil.verified !== false) writeJson(join(dir, 'verification.json'), record)
  if (spoil.afterVerify) {
    spoil.afterVerify(transcript)
    writeJson(join(dir, 'transcript.json'), transcript)
  }
  spoil.files?.(dir)
  return dir
}
