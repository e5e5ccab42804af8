import * as cip14 from '@emurgo/cip14-js'
import { defaultExport } from '../../lib/interop.ts'

const AssetFingerprint = defaultExport<{ fromParts(policy: Uint8Array, name: Uint8Array): { fingerprint(): string } }>(cip14)

interface AssetParts {
  policyId: string
  assetNameHex: string
  /** The name as UTF-8 text when it decodes to printable characters, else null. */
  assetName: string | null
  /** CIP-14 fingerprint, asset1… */
  fingerprint: string
}

/** Splits an asset unit (policy id + asset name hex) into its parts. */
export function describeAsset(unit: string): AssetParts {
  const policyId = unit.slice(0, 56)
  const assetNameHex = unit.slice(56)
  const nameBytes = Buffer.from(assetNameHex, 'hex')
  return {
    policyId,
    assetNameHex,
    assetName: printableUtf8(nameBytes),
    fingerprint: AssetFingerprint.fromParts(Buffer.from(policyId, 'hex'), nameBytes).fingerprint(),
  }
}

function printableUtf8(bytes: Buffer): string | null {
  if (bytes.length === 0) return null
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes)
  return /^[\x20-\x7E\u00A0-\uFFFC]+$/.test(text) && !text.includes('\uFFFD') ? text : null
}
